package procedures

import (
	"github.com/procgraph/procgraph/binding"
	"testing"
)

// TestSchemaHash: a tool's schema hash changes with its input schema,
// read-only verdict and external access, never with its description or
// name, and does not depend on map order.
func TestSchemaHash(t *testing.T) {
	base := Tool{Name: "a", Description: "one", ReadOnly: true, ExternalAccess: true,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}}}
	h := schemaHash(base)
	cases := []struct {
		name string
		edit func(t *Tool)
		same bool
	}{
		{"description", func(t *Tool) { t.Description = "two" }, true},
		{"name", func(t *Tool) { t.Name = "b" }, true},
		{"map order", func(t *Tool) {
			t.InputSchema = map[string]any{"properties": map[string]any{"x": map[string]any{"type": "integer"}}, "type": "object"}
		}, true},
		{"input schema", func(t *Tool) { t.InputSchema = map[string]any{"type": "object"} }, false},
		{"read-only", func(t *Tool) { t.ReadOnly = false }, false},
		{"external access", func(t *Tool) { t.ExternalAccess = false }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := base
			c.edit(&tl)
			if got := schemaHash(tl); (got == h) != c.same {
				t.Fatalf("SchemaHash = %s (base %s), want same = %v", got, h, c.same)
			}
		})
	}
	if len(h) != len("sha256:")+64 {
		t.Fatalf("SchemaHash = %q, want sha256: and 64 hex", h)
	}
}

// TestBindingCheckNested: a nested call is refused nested_changed unless
// the procedure is, right now, the one bound (version and classification);
// a run no authorization bound checks nothing.
func TestBindingCheckNested(t *testing.T) {
	b := &binding.Binding{Nested: []binding.BoundNested{{Name: "proc__x", CodeHash: "h1", ReadOnly: true, StateChangingTools: []string{}},
		{Name: "proc__y", CodeHash: binding.NestedAbsent, StateChangingTools: []string{}}}}
	cases := []struct {
		name string
		b    *binding.Binding
		call string
		p    *Procedure
		want string
	}{
		{"as bound", b, "proc__x", &Procedure{CodeHash: "h1", ReadOnly: true}, ""},
		{"new version", b, "proc__x", &Procedure{CodeHash: "h2", ReadOnly: true}, binding.ReasonNestedChanged},
		{"reclassified", b, "proc__x", &Procedure{CodeHash: "h1", StateChangingTools: []string{"kill_job"}}, binding.ReasonNestedChanged},
		{"absent at review, present now", b, "proc__y", &Procedure{CodeHash: "h3", ReadOnly: true}, binding.ReasonNestedChanged},
		{"not in the binding", b, "proc__z", &Procedure{CodeHash: "h1", ReadOnly: true}, binding.ReasonNestedChanged},
		{"no binding", nil, "proc__z", &Procedure{CodeHash: "h1"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CheckNested(c.b, c.call, c.p); got != c.want {
				t.Fatalf("CheckNested = %q, want %q", got, c.want)
			}
		})
	}
}
