package procedures

import (
	"strings"
	"testing"
)

// TestBaselineCheck: what BaselineOf makes passes; a contract of a tool
// outside the signature, of a procedure, repeated or out of order, or
// with a malformed hash does not.
func TestBaselineCheck(t *testing.T) {
	cat, err := NewCatalogue([]Tool{{Name: "a", ReadOnly: true}, {Name: "b"}, {Name: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	sig := []string{"b", "proc__x", "a", "zz"}
	good := BaselineOf(sig, cat)
	if why := good.Check(sig); why != "" || len(good.Tools) != 2 {
		t.Fatalf("BaselineOf's %+v: %q", good, why)
	}
	if why := (&Baseline{}).Check(sig); why != "" {
		t.Errorf("an empty baseline: %q", why)
	}
	edit := func(f func(b *Baseline)) *Baseline {
		c := &Baseline{Tools: append([]ToolContract(nil), good.Tools...)}
		f(c)
		return c
	}
	for name, b := range map[string]*Baseline{
		"outside the signature": edit(func(b *Baseline) { b.Tools[1].Tool = "c" }),
		"a procedure":           edit(func(b *Baseline) { b.Tools[1].Tool = "proc__x" }),
		"out of order":          edit(func(b *Baseline) { b.Tools[0], b.Tools[1] = b.Tools[1], b.Tools[0] }),
		"repeated":              edit(func(b *Baseline) { b.Tools[1] = b.Tools[0] }),
		"schema hash":           edit(func(b *Baseline) { b.Tools[0].SchemaHash = "sha256:" + strings.Repeat("A", 64) }),
		"input hash":            edit(func(b *Baseline) { b.Tools[0].InputHash = "x" }),
		"output hash":           edit(func(b *Baseline) { b.Tools[0].OutputHash = "sha256:" + strings.Repeat("0", 63) + "\n" }),
	} {
		if why := b.Check(sig); why == "" {
			t.Errorf("%s: %+v passes", name, b)
		}
	}
}
