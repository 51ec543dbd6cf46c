package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// affected returns the mutants of sel that the change since the commit base
// may affect, in their order: those that edit a directory the change
// touches (the mutants of a changed package) and those declared in a list
// file the change touches (a new or changed mutant). A change to a test
// alone selects nothing: the rotation (share) and `make mutants` cover
// a test that stopped killing its mutant. The change is every file that
// differs between base and the working tree, untracked files included.
func affected(ctx context.Context, root, base string, sel []Mutant) ([]Mutant, error) {
	files, err := changedFiles(ctx, root, base)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	named := map[string]bool{}
	for _, f := range files {
		dirs[path.Dir(f)] = true
		if path.Dir(f) == "internal/mutants" && strings.HasPrefix(path.Base(f), "list") && strings.HasSuffix(f, ".go") {
			names, err := declaredMutants(filepath.Join(root, filepath.FromSlash(f)))
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				named[n] = true
			}
		}
	}
	var out []Mutant
	for _, m := range sel {
		hit := named[m.Name]
		for _, e := range m.Edits {
			hit = hit || dirs[path.Clean(e.Dir)]
		}
		if hit {
			out = append(out, m)
		}
	}
	return out, nil
}

// changedFiles lists the files (slash-separated, relative to root) that
// differ between base and the working tree, and the untracked ones git
// does not ignore.
func changedFiles(ctx context.Context, root, base string) ([]string, error) {
	var files []string
	for _, args := range [][]string{
		{"diff", "--name-only", "--no-renames", base, "--"},
		{"ls-files", "--others", "--exclude-standard"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
		}
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f != "" && !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files, nil
}

// declaredMutants returns the names of the mutants a list file declares:
// the string of every `Name:` key of a composite literal.
func declaredMutants(file string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		key, ok := kv.Key.(*ast.Ident)
		lit, isLit := kv.Value.(*ast.BasicLit)
		if ok && key.Name == "Name" && isLit && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				names = append(names, s)
			}
		}
		return true
	})
	return names, nil
}

// share returns the mutants of sel in share day of n: a mutant's share is
// a hash of its name modulo n, so with one run a day and n = 7 every mutant
// runs at least once a week whatever changes.
func share(sel []Mutant, day, n int) []Mutant {
	var out []Mutant
	for _, m := range sel {
		h := fnv.New32a()
		h.Write([]byte(m.Name))
		if int(h.Sum32()%uint32(n)) == day%n {
			out = append(out, m)
		}
	}
	return out
}

// union returns the mutants of all that are in a or b, in all's order.
func union(all, a, b []Mutant) []Mutant {
	in := map[string]bool{}
	for _, m := range append(slices.Clone(a), b...) {
		in[m.Name] = true
	}
	var out []Mutant
	for _, m := range all {
		if in[m.Name] {
			out = append(out, m)
		}
	}
	return out
}
