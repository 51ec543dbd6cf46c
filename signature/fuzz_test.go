package signature

import (
	"errors"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	validName = regexp.MustCompile(`^proc__[0-9A-Za-z_]*$`)
	validHash = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// FuzzAnalyze checks Analyze's invariants on arbitrary code in both
// dialects. It is seeded with every corpus file in both dialects.
func FuzzAnalyze(f *testing.F) {
	for _, path := range corpusFiles(f) {
		code, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(code), false)
		f.Add(string(code), true)
	}
	f.Fuzz(func(t *testing.T, code string, pythonAsync bool) {
		dialect := Starlark
		if pythonAsync {
			dialect = PythonAsync
		}
		checkEagerAgrees(t, code, dialect)
		a, err := Analyze(code, dialect)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			if e.Line < 0 || e.Column < 0 || e.Feature == "" || e.Message == "" {
				t.Fatalf("bad error %+v", e)
			}
			if (e.Line == 0) != (e.Column == 0) {
				t.Fatalf("half-known position %+v", e)
			}
			return
		}
		checkSortedUnique(t, "Signature", a.Signature)
		checkSortedUnique(t, "Parameters", a.Parameters)
		checkSortedUnique(t, "ProcRefs", a.ProcRefs)
		if len(a.Signature) == 0 {
			t.Fatal("success with an empty signature")
		}
		for _, r := range a.ProcRefs {
			if !strings.HasPrefix(r, "proc__") || !contains(a.Signature, r) {
				t.Fatalf("ProcRef %q not a proc__ entry of the signature %q", r, a.Signature)
			}
		}
		for _, s := range a.Signature {
			if strings.HasPrefix(s, "proc__") && !contains(a.ProcRefs, s) {
				t.Fatalf("signature entry %q missing from ProcRefs", s)
			}
		}
		if contains(a.Parameters, "tools") {
			t.Fatal("tools is a parameter")
		}
		if !validName.MatchString(a.Name) || len(a.Name) > 60 || a.Name != Name(a.Signature) {
			t.Fatalf("bad name %q", a.Name)
		}
		if !validHash.MatchString(a.CodeHash) || a.CodeHash != CodeHash(code) {
			t.Fatalf("bad code hash %q", a.CodeHash)
		}
		if dialect == Starlark && a.Source != code {
			t.Fatal("dialect starlark changed the source")
		}
		if n, m := countBreaks(code), countBreaks(a.Source); n != m {
			t.Fatalf("rewrite changed the line count from %d to %d:\n%s", n, m, a.Source)
		}
		if a.Opaque != hasOpaqueWarning(a.Warnings) {
			t.Fatalf("Opaque = %v but warnings %v", a.Opaque, a.Warnings)
		}
		for _, w := range a.Warnings {
			if w.Line <= 0 || w.Column <= 0 || w.Message == "" {
				t.Fatalf("bad warning %+v", w)
			}
		}
		// The rewritten source is plain Starlark: analysing it again gives
		// the same result, except for the hash of the captured code.
		b, err := Analyze(a.Source, Starlark)
		if err != nil {
			t.Fatalf("rewritten source rejected: %v\n%s", err, a.Source)
		}
		b.CodeHash, b.Warnings = a.CodeHash, nil
		a2 := *a
		a2.Warnings = nil
		// Positions are of the code as written, which the rewrite moves.
		a2.Flows, b.Flows = flowsWithoutPositions(a.Flows), flowsWithoutPositions(b.Flows)
		if !reflect.DeepEqual(&a2, b) {
			t.Fatalf("re-analysis differs:\n%+v\n%+v", a2, *b)
		}
	})
}

func checkSortedUnique(t *testing.T, what string, xs []string) {
	t.Helper()
	if xs == nil || !sort.StringsAreSorted(xs) {
		t.Fatalf("%s %q not a sorted non-nil slice", what, xs)
	}
	for i := 1; i < len(xs); i++ {
		if xs[i] == xs[i-1] {
			t.Fatalf("%s %q has duplicates", what, xs)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func hasOpaqueWarning(ws []Warning) bool {
	for _, w := range ws {
		if strings.Contains(w.Message, "opaque use of tools") {
			return true
		}
	}
	return false
}

// countBreaks counts line breaks as go.starlark.net does (\n, \r\n, \r).
func countBreaks(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if k := lineBreak(s, i); k > 0 {
			n++
			i += k - 1
		}
	}
	return n
}

func flowsWithoutPositions(fs []Flow) []Flow {
	out := make([]Flow, len(fs))
	for i, f := range fs {
		f.Line, f.Column = 0, 0
		out[i] = f
	}
	return out
}
