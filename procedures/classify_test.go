package procedures

import (
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/schemas"
)

func mustCatalogue(tb testing.TB, tools ...Tool) *Catalogue {
	tb.Helper()
	c, err := NewCatalogue(tools)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestClassify(t *testing.T) {
	cat := mustCatalogue(t,
		Tool{Name: "get_jobs", ReadOnly: true, ExternalAccess: true},
		Tool{Name: "get_logs", ReadOnly: true},
		Tool{Name: "kill_job", ReadOnly: false, ExternalAccess: true},
	)
	procs := map[string]*Procedure{
		"proc__get_jobs__get_logs": {Name: "proc__get_jobs__get_logs", Signature: []string{"get_jobs", "get_logs"}},
		"proc__get_jobs__kill_job": {Name: "proc__get_jobs__kill_job", Signature: []string{"get_jobs", "kill_job"}},
		"proc__a":                  {Name: "proc__a", Signature: []string{"get_logs", "proc__b"}},
		"proc__b":                  {Name: "proc__b", Signature: []string{"get_logs", "proc__a"}},
		"proc__d1":                 {Name: "proc__d1", Signature: []string{"proc__d2"}},
		"proc__d2":                 {Name: "proc__d2", Signature: []string{"proc__d3"}},
		"proc__d3":                 {Name: "proc__d3", Signature: []string{"proc__d4"}},
		"proc__d4":                 {Name: "proc__d4", Signature: []string{"proc__d5"}},
		"proc__d5":                 {Name: "proc__d5", Signature: []string{"get_logs"}},
		"proc__e2":                 {Name: "proc__e2", Signature: []string{"proc__d3"}},
		"proc__w1":                 {Name: "proc__w1", Signature: []string{"proc__get_jobs__kill_job", "proc__d1"}},
		"proc__r":                  {Name: "proc__r", Signature: []string{"get_jobs"}, Retired: &Retirement{RetiredBy: "admin"}},
		"proc__calls_r":            {Name: "proc__calls_r", Signature: []string{"get_logs", "proc__r"}},
	}
	tests := []struct {
		name      string
		signature []string
		readOnly  bool
		state     []string
		unknown   []string
		external  bool
		problem   string
	}{
		{"all read-only", []string{"get_jobs", "get_logs"}, true, nil, nil, true, ""},
		{"one state-changing", []string{"get_jobs", "kill_job"}, false, []string{"kill_job"}, nil, true, ""},
		{"unknown tool fails closed", []string{"get_logs", "mystery"}, false, nil, []string{"mystery"}, false, ""},
		{"nested read-only", []string{"get_logs", "proc__get_jobs__get_logs"}, true, nil, nil, true, ""},
		{"nested state-changing", []string{"get_logs", "proc__get_jobs__kill_job"}, false, []string{"proc__get_jobs__kill_job"}, nil, true, ""},
		{"nested unknown procedure", []string{"get_logs", "proc__nope"}, false, nil, []string{"proc__nope"}, false, ""},
		{"cycle is not read-only and changes no state", []string{"proc__a"}, false, nil, nil, false, audit.ReasonCycle},
		{"depth four is fine", []string{"proc__e2"}, true, nil, nil, false, ""},
		{"depth five is too deep, not state-changing", []string{"proc__d1"}, false, nil, nil, false, audit.ReasonNestingTooDeep},
		{"too deep beside a state-changing tool", []string{"kill_job", "proc__d1"}, false, []string{"kill_job"}, nil, true, audit.ReasonNestingTooDeep},
		{"too deep inside a state-changing chain", []string{"proc__w1"}, false, []string{"proc__w1"}, nil, true, audit.ReasonNestingTooDeep},
		{"empty catalogue", []string{"get_jobs", "get_logs"}, false, nil, nil, false, ""},
		{"calls a retired procedure", []string{"get_logs", "proc__r"}, false, nil, nil, false, audit.ReasonCallsRetired},
		{"calls a caller of a retired procedure", []string{"proc__calls_r"}, false, nil, nil, false, audit.ReasonCallsRetired},
		{"retired beside a state-changing tool", []string{"kill_job", "proc__r"}, false, []string{"kill_job"}, nil, true, audit.ReasonCallsRetired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cat
			if tc.name == "empty catalogue" {
				c = mustCatalogue(t)
				tc.unknown = []string{"get_jobs", "get_logs"}
			}
			got := Classify(tc.signature, c, procs)
			if got.ReadOnly != tc.readOnly {
				t.Errorf("ReadOnly = %v, want %v", got.ReadOnly, tc.readOnly)
			}
			if !reflect.DeepEqual(jsonvalue.List(got.StateChangingTools), jsonvalue.List(tc.state)) {
				t.Errorf("StateChangingTools = %v, want %v", got.StateChangingTools, tc.state)
			}
			if !reflect.DeepEqual(jsonvalue.List(got.UnknownTools), jsonvalue.List(tc.unknown)) {
				t.Errorf("UnknownTools = %v, want %v", got.UnknownTools, tc.unknown)
			}
			if got.ExternalAccess != tc.external {
				t.Errorf("ExternalAccess = %v, want %v", got.ExternalAccess, tc.external)
			}
			if got.Problem != tc.problem {
				t.Errorf("Problem = %q, want %q", got.Problem, tc.problem)
			}
		})
	}
}

func TestClassExposed(t *testing.T) {
	tests := []struct {
		name          string
		class         Class
		allowMutating bool
		want          bool
	}{
		{"read-only succeeded pair", Class{Status: StatusSucceeded, Tools: 2, ReadOnly: true}, false, true},
		{"failed", Class{Status: StatusFailed, Tools: 2, ReadOnly: true}, false, false},
		{"opaque", Class{Status: StatusSucceeded, Opaque: true, Tools: 2, ReadOnly: true}, false, false},
		{"single tool", Class{Status: StatusSucceeded, Tools: 1, ReadOnly: true}, false, false},
		{"state-changing, mutating off", Class{Status: StatusSucceeded, Tools: 2}, false, false},
		{"state-changing, mutating on", Class{Status: StatusSucceeded, Tools: 2}, true, true},
		{"nesting problem, mutating on", Class{Status: StatusSucceeded, Tools: 2, Problem: true}, true, false},
		{"retired, read-only", Class{Status: StatusSucceeded, Tools: 2, ReadOnly: true, Retired: true}, false, false},
		{"retired, mutating on", Class{Status: StatusSucceeded, Tools: 2, Retired: true}, true, false},
		{"demoted, read-only", Class{Status: StatusSucceeded, Tools: 2, ReadOnly: true, Demoted: true}, false, false},
		{"demoted, mutating on", Class{Status: StatusSucceeded, Tools: 2, Demoted: true}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.class.exposed(tc.allowMutating); got != tc.want {
				t.Fatalf("Exposed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewCatalogue(t *testing.T) {
	tests := []struct {
		name  string
		tools []Tool
		ok    bool
	}{
		{"empty", nil, true},
		{"two tools", []Tool{{Name: "b"}, {Name: "a", ReadOnly: true}}, true},
		{"duplicate", []Tool{{Name: "a"}, {Name: "a"}}, false},
		{"empty name", []Tool{{Name: ""}}, false},
		{"bad characters", []Tool{{Name: "kill job"}}, false},
		{"reserved proc__ prefix", []Tool{{Name: "proc__x"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCatalogue(tc.tools)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && fault.ErrorCode(err) != fault.CodeInvalid {
				t.Fatalf("code = %s, want invalid_request", fault.ErrorCode(err))
			}
			if err == nil && len(c.Tools) > 1 && c.Tools[0].Name > c.Tools[1].Name {
				t.Fatal("tools are not sorted by name")
			}
		})
	}
	if c := mustCatalogue(t, Tool{Name: "a"}); c.Tools[0].InputSchema == nil {
		t.Fatal("a tool without an input schema must get {} (the contract's object)")
	}
	a := mustCatalogue(t, Tool{Name: "a", ReadOnly: true})
	b := mustCatalogue(t, Tool{Name: "a", ReadOnly: false})
	if a.Revision == b.Revision {
		t.Fatal("a change of read_only must change the revision")
	}
	if a2 := mustCatalogue(t, Tool{Name: "a", ReadOnly: true}); a2.Revision != a.Revision {
		t.Fatal("the same catalogue must have the same revision")
	}
}

func TestInputSchema(t *testing.T) {
	got, err := schemas.InputSchema([]string{"task_id"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["required"], []any{"task_id"}) || got["additionalProperties"] != false {
		t.Fatalf("generated schema = %v", got)
	}
	rich := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}, "n": map[string]any{"type": "integer"}}, "required": []any{"n"}}
	got, err = schemas.InputSchema([]string{"task_id"}, rich)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["required"], []any{"n", "task_id"}) {
		t.Fatalf("a supplied schema must come to require every parameter: %v", got["required"])
	}
	if _, present := rich["required"].([]any); !present || len(rich["required"].([]any)) != 1 {
		t.Fatal("InputSchema must not modify the supplied schema")
	}
	bad := []struct {
		name   string
		schema map[string]any
	}{
		{"not an object", map[string]any{"type": "array"}},
		{"required not a list", map[string]any{"required": "task_id"}},
		{"does not compile", map[string]any{"properties": map[string]any{"x": map[string]any{"type": 7}}}},
		{"remote ref", map[string]any{"$ref": "http://example.invalid/schema.json"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := schemas.InputSchema([]string{"task_id"}, tc.schema); fault.ErrorCode(err) != fault.CodeInvalid {
				t.Fatalf("err = %v, want invalid_request", err)
			}
		})
	}
}

func TestErrorCode(t *testing.T) {
	if fault.ErrorCode(nil) != "" {
		t.Fatal("nil has no code")
	}
	if fault.ErrorCode(fault.Errorf(fault.CodeNotFound, "x")) != fault.CodeNotFound {
		t.Fatal("code lost")
	}
	if fault.ErrorCode(io.ErrUnexpectedEOF) != fault.CodeInternal || fault.ErrorMessage(io.ErrUnexpectedEOF) != "internal error" {
		t.Fatal("a foreign error must be internal and leak nothing")
	}
}

func TestAutoRunState(t *testing.T) {
	bound := &binding.Binding{CodeHash: "h1", StatementHash: "s1", Signature: []string{"a", "proc__x"}, ReadOnly: true,
		StateChangingTools: []string{}, Tools: []binding.BoundTool{{Name: "a", SchemaHash: "t1"}},
		Nested: []binding.BoundNested{{Name: "proc__x", CodeHash: "x1", ReadOnly: true, StateChangingTools: []string{}}}}
	grant := &Grant{Enabled: true, GrantedBy: "alice", CodeHash: "h1", Binding: bound}
	unbound := &Grant{Enabled: true, GrantedBy: "alice", CodeHash: "h1"}
	changed := func(edit func(b *binding.Binding)) *binding.Binding {
		b := *bound
		b.Tools, b.Nested = slices.Clone(b.Tools), slices.Clone(b.Nested)
		edit(&b)
		return &b
	}
	tests := []struct {
		name     string
		p        Procedure
		cur      *binding.Binding
		readOnly bool
		mutating bool
		active   bool
		inactive string
	}{
		{"active", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: grant}, bound, true, false, true, ""},
		{"code changed", Procedure{CodeHash: "h2", Status: StatusSucceeded, Grant: grant}, bound, true, false, false, binding.InactiveCodeChanged},
		{"no longer read-only", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: grant}, bound, false, false, false, inactiveNotReadOnly},
		{"state-changing with mutating on", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: grant}, bound, false, true, true, ""},
		{"not succeeded", Procedure{CodeHash: "h1", Status: StatusFailed, Grant: grant}, bound, true, false, false, inactiveNotSucceeded},
		{"no grant", Procedure{CodeHash: "h1", Status: StatusSucceeded}, nil, true, false, false, ""},
		{"unbound", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: unbound}, bound, true, false, false, binding.InactiveUnbound},
		{"another program, one code hash", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: grant},
			changed(func(b *binding.Binding) { b.StatementHash = "s2" }), true, false, false, binding.InactiveCodeChanged},
		{"reclassified", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: grant},
			changed(func(b *binding.Binding) { b.ReadOnly, b.StateChangingTools = false, []string{"a"} }), false, true, false, binding.InactiveReclassified},
		{"catalogue drift", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: grant},
			changed(func(b *binding.Binding) { b.Tools[0].SchemaHash = "t2" }), true, false, false, binding.InactiveCatalogueDrift},
		{"nested changed", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: grant},
			changed(func(b *binding.Binding) { b.Nested[0].CodeHash = "x2" }), true, false, false, binding.InactiveNestedChanged},
		{"nested absent at review", Procedure{CodeHash: "h1", Status: StatusSucceeded, Grant: &Grant{Enabled: true, CodeHash: "h1",
			Binding: changed(func(b *binding.Binding) { b.Nested[0].CodeHash = binding.NestedAbsent })}}, bound, true, false, false, binding.InactiveNestedChanged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := autoRunState(&tc.p, tc.readOnly, tc.cur, tc.mutating)
			if a.Active != tc.active {
				t.Fatalf("Active = %v, want %v", a.Active, tc.active)
			}
			got := ""
			if a.InactiveReason != nil {
				got = *a.InactiveReason
			}
			if got != tc.inactive {
				t.Fatalf("InactiveReason = %q, want %q", got, tc.inactive)
			}
		})
	}
}
