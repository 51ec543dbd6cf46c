package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsPointDown lists the module's packages with go list and checks
// that every package has a layer, imports only lower layers, and that the
// table names no package that is gone.
func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", Module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], Module+"/")
		if !ok {
			continue
		}
		seen[pkg] = true
		layer, ok := Layers[pkg]
		if !ok {
			t.Errorf("package %s has no layer in internal/layers", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, Module+"/")
			if !ok {
				continue
			}
			if l, ok := Layers[dep]; ok && l >= layer {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point down only", pkg, layer, dep, l)
			}
		}
	}
	if len(seen) < 20 {
		t.Fatalf("go list found %d packages of the module", len(seen))
	}
	for pkg := range Layers {
		if !seen[pkg] {
			t.Errorf("internal/layers names %s, which is not a package of the module (moved or deleted?)", pkg)
		}
	}
}
