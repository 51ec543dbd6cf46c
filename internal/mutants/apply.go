package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Edit is one change a mutant makes: the fragment Find, which must occur
// exactly once among the non-test Go files of the package directory Dir
// (relative to the module root), becomes Replace. Runs of white space in
// Find match any run of white space, so gofmt re-aligning a line does not
// unapply a mutant; a fragment that moved to another file of the package
// is still found. Files, when set, is the glob of Dir's files searched
// instead of "*.go": files a package embeds (the console's "*.js"), which
// the overlay replaces in the build as it does Go files.
type Edit struct {
	Dir     string
	Files   string
	Find    string
	Replace string
}

// pattern is Find as a regular expression, white space flexible.
func (e Edit) pattern() *regexp.Regexp {
	words := strings.Fields(e.Find)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(strings.Join(words, `\s+`))
}

// mutated is one file's mutated content.
type mutated struct {
	path    string // absolute path of the original file
	content []byte
}

// apply finds every edit of m under root and returns the mutated files. An
// edit whose fragment is missing or found more than once is an error: the
// mutant is not applied, and is never reported as killed.
func apply(root string, m Mutant) ([]mutated, error) {
	files := map[string][]byte{} // path -> content so far
	for i, e := range m.Edits {
		if strings.TrimSpace(e.Find) == "" {
			return nil, fmt.Errorf("edit %d: empty fragment", i+1)
		}
		dir := filepath.Join(root, filepath.FromSlash(e.Dir))
		glob := e.Files
		if glob == "" {
			glob = "*.go"
		}
		names, err := filepath.Glob(filepath.Join(dir, glob))
		if err != nil || len(names) == 0 {
			return nil, fmt.Errorf("edit %d: no %s files in %s", i+1, glob, e.Dir)
		}
		sort.Strings(names)
		re := e.pattern()
		var hits []string
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, ok := files[name]
			if !ok {
				if src, err = os.ReadFile(name); err != nil {
					return nil, fmt.Errorf("edit %d: %v", i+1, err)
				}
			}
			for range re.FindAllIndex(src, -1) {
				hits = append(hits, name)
			}
		}
		switch len(hits) {
		case 0:
			return nil, fmt.Errorf("edit %d: %q is not in %s (the code moved or changed: update the mutant)", i+1, e.Find, e.Dir)
		case 1:
		default:
			return nil, fmt.Errorf("edit %d: %q is in %s %d times, want once (make the fragment longer)", i+1, e.Find, e.Dir, len(hits))
		}
		name := hits[0]
		src, ok := files[name]
		if !ok {
			if src, err = os.ReadFile(name); err != nil {
				return nil, err
			}
		}
		loc := re.FindIndex(src)
		out := make([]byte, 0, len(src)+len(e.Replace))
		out = append(append(append(out, src[:loc[0]]...), e.Replace...), src[loc[1]:]...)
		files[name] = out
	}
	out := make([]mutated, 0, len(files))
	for path, content := range files {
		out = append(out, mutated{path: path, content: content})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// writeOverlay writes the mutated files and a `go build -overlay` file
// replacing the originals with them into dir, and returns the overlay
// file's path. The working tree is never touched.
func writeOverlay(dir string, files []mutated) (string, error) {
	replace := map[string]string{}
	for i, f := range files {
		p := filepath.Join(dir, fmt.Sprintf("%d_%s", i, filepath.Base(f.path)))
		if err := os.WriteFile(p, f.content, 0o600); err != nil {
			return "", err
		}
		replace[f.path] = p
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	return overlay, os.WriteFile(overlay, b, 0o600)
}
