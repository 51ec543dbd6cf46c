package signature

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPythonCompat compares ProcedureName and CodeHash with Bamboo's Python
// reference, run once by testdata/pycompat/gen.py into golden.json.
func TestPythonCompat(t *testing.T) {
	raw, err := os.ReadFile("testdata/pycompat/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Names []struct {
			Signature []string
			Name      string
		}
		Hashes []struct {
			Code string
			Hash string
		}
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Names) == 0 || len(g.Hashes) == 0 {
		t.Fatal("empty golden file")
	}
	for _, c := range g.Names {
		if got := ProcedureName(c.Signature); got != c.Name {
			t.Errorf("ProcedureName(%q) = %q, Python says %q", c.Signature, got, c.Name)
		}
	}
	for _, c := range g.Hashes {
		if got := CodeHash(c.Code); got != c.Hash {
			t.Errorf("CodeHash(%q) = %s, Python says %s", c.Code, got, c.Hash)
		}
	}
}

func TestProcedureName(t *testing.T) {
	valid := regexp.MustCompile(`^proc__[0-9A-Za-z_]*$`)
	cases := []struct {
		name string
		sig  []string
		want string
	}{
		{"two tools", []string{"a", "b"}, "proc__a__b"},
		{"empty", nil, "proc__"},
		{"exactly 60", []string{strings.Repeat("x", 54)}, "proc__" + strings.Repeat("x", 54)},
		{"61 hashed", []string{strings.Repeat("x", 55)}, "proc__" + strings.Repeat("x", 45) + "_d5e28568"},
		{"punctuation", []string{"a-b", "c.d"}, "proc__a_b__c_d"},
		{"non-ascii rune is one underscore", []string{"café"}, "proc__caf_"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ProcedureName(c.sig)
			if got != c.want {
				t.Fatalf("ProcedureName = %q, want %q", got, c.want)
			}
			if !valid.MatchString(got) || len(got) > 60 {
				t.Fatalf("ProcedureName = %q: not a valid name", got)
			}
		})
	}
}
