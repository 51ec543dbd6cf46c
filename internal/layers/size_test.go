package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moduleFiles returns the Go files (tests included) of every package of the
// module, by package path relative to Module, as go list reports them.
func moduleFiles(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}} {{join .GoFiles \" \"}} {{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}", Module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	files := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], Module+"/")
		if !ok || len(fields) < 2 {
			continue
		}
		for _, f := range fields[2:] {
			files[pkg] = append(files[pkg], filepath.Join(fields[1], f))
		}
	}
	if len(files) < 20 {
		t.Fatalf("go list found %d packages of the module", len(files))
	}
	return files
}

// TestInterfacesAreNarrow parses every Go file of the module and fails on
// an interface (named or not, in production code or tests) that declares
// more than MaxMethods methods.
func TestInterfacesAreNarrow(t *testing.T) {
	fset := token.NewFileSet()
	seen := 0
	for _, paths := range moduleFiles(t) {
		for _, path := range paths {
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", path, err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				it, ok := n.(*ast.InterfaceType)
				if !ok {
					return true
				}
				seen++
				if got := declaredMethods(it); got > MaxMethods {
					t.Errorf("%s: %s declares %d methods, more than %d: split it by area and compose the parts",
						fset.Position(it.Pos()), interfaceName(f, it), got, MaxMethods)
				}
				return true
			})
		}
	}
	if seen < 20 {
		t.Fatalf("found %d interfaces in the module", seen)
	}
}

// declaredMethods counts the methods written in the interface's body, not
// those of the interfaces it embeds.
func declaredMethods(it *ast.InterfaceType) int {
	n := 0
	for _, m := range it.Methods.List {
		if _, ok := m.Type.(*ast.FuncType); ok {
			n += len(m.Names)
		}
	}
	return n
}

// interfaceName is the name the interface is declared under, or
// "an interface literal".
func interfaceName(f *ast.File, it *ast.InterfaceType) string {
	name := "an interface literal"
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Type == it {
			name = ts.Name.Name
			return false
		}
		return true
	})
	return name
}

// TestDomainExportsAreBounded counts what procedures exports outside its
// tests (see MaxDomainExports) and fails above the bound.
func TestDomainExportsAreBounded(t *testing.T) {
	paths := moduleFiles(t)[Domain]
	fset := token.NewFileSet()
	var names []string
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		names = append(names, exported(f)...)
	}
	if len(names) < 20 {
		t.Fatalf("found %d exports in %s", len(names), Domain)
	}
	if len(names) > MaxDomainExports {
		t.Errorf("%s exports %d identifiers (top-level and methods), more than %d: unexport what nothing outside it uses, or move an area out",
			Domain, len(names), MaxDomainExports)
	}
	t.Logf("%s exports %d identifiers", Domain, len(names))
}

// exported lists the exported top-level identifiers of f and the exported
// methods declared on its exported types (as Type.Method).
func exported(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			} else if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
				names = append(names, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names = append(names, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// receiverName is the type name of a method's receiver.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
