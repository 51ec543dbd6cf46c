package mcpserve

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// fullTool is a proc__ tool with every field of mcp.Tool set, so a test
// can change each in turn.
func fullTool(t *testing.T) *mcp.Tool {
	t.Helper()
	rate := 0.5
	tool, ok := procTool(replay.ToolDescriptor{
		Name: "proc__a__b", Description: "a then b", ReadOnly: true, ExternalAccess: true, AutoRun: true,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}},
		Signature:   []string{"a", "b"}, Runs: 4, SuccessRate: &rate,
	})
	if !ok {
		t.Fatal("not a tool")
	}
	tool.Title = "A then B"
	tool.OutputSchema = map[string]any{"type": "object"}
	tool.Icons = []mcp.Icon{{Source: "https://example.org/i.png"}}
	return tool
}

// differ changes v (settable) to a different value of its type; false
// when it does not know how.
func differ(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			p.Elem().Set(v.Elem())
		}
		if !differ(p.Elem()) {
			return false
		}
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() && differ(v.Field(i)) {
				return true
			}
		}
		return false
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return false
		}
		m := reflect.MakeMap(v.Type())
		for it := v.MapRange(); it.Next(); {
			m.SetMapIndex(it.Key(), it.Value())
		}
		val := reflect.New(v.Type().Elem()).Elem()
		if val.Kind() == reflect.Interface {
			val.Set(reflect.ValueOf("differ"))
		}
		m.SetMapIndex(reflect.ValueOf("differ").Convert(v.Type().Key()), val)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprintf("differ from %v", v.Interface())))
	default:
		return false
	}
	return true
}

// TestSameToolIsDeepEqual: sameTool agrees with reflect.DeepEqual on
// tools that differ in any one field of mcp.Tool (each field found by
// reflection, so a field the SDK adds and sameTool does not compare fails
// here), and on equal tools built apart.
func TestSameToolIsDeepEqual(t *testing.T) {
	if a, b := fullTool(t), fullTool(t); !sameTool(a, b) || !reflect.DeepEqual(a, b) {
		t.Fatal("two tools built alike are not the same")
	}
	typ := reflect.TypeFor[mcp.Tool]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			a, b := fullTool(t), fullTool(t)
			if !differ(reflect.ValueOf(b).Elem().Field(i)) {
				t.Fatalf("differ cannot change a field of kind %s: teach it", f.Type.Kind())
			}
			if reflect.DeepEqual(a, b) {
				t.Fatalf("differ left %s alike", f.Name)
			}
			if sameTool(a, b) {
				t.Fatalf("sameTool does not compare %s", f.Name)
			}
		})
	}
}

// roTools puts a catalogue of n more read-only tools (t_0 … t_{n-1})
// beside the env's and returns the code of procedure i: t_0 then t_i
// (i ≥ 1), exposed on both endpoints.
func (e *env) roTools(n int) func(i int) string {
	e.t.Helper()
	tools := []procedures.Tool{{Name: "get_jobs", ReadOnly: true, ExternalAccess: true}, {Name: "fetch_logs", ReadOnly: true}, {Name: "kill_job"}}
	for i := range n {
		tools = append(tools, procedures.Tool{Name: fmt.Sprintf("t_%d", i), ReadOnly: true})
	}
	if _, err := e.svc.PutCatalogue(context.Background(), tools, "tester"); err != nil {
		e.t.Fatal(err)
	}
	return func(i int) string { return fmt.Sprintf("x = tools.t_0(task_id=task_id)\nreturn tools.t_%d(x=x)", i) }
}

// runSpaced starts h.Run with a spacing that never passes by itself: each
// wait Run begins is sent on the returned channel, and a value sent on
// fire ends it. Run ends at cleanup.
func runSpaced(t *testing.T, h *Handler) (waits <-chan time.Duration, fire chan<- time.Time) {
	t.Helper()
	w, f := make(chan time.Duration, 64), make(chan time.Time)
	h.spacing = time.Hour
	h.after = func(d time.Duration) <-chan time.Time { w <- d; return f }
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { h.Run(ctx); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })
	return w, f
}

// eventually polls cond (every 5 ms, up to 10 s) and fails with what
// when it never holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// offered reports whether h offers the proc__ tool name now.
func (h *Handler) offered(name string) bool {
	h.refreshMu.Lock()
	defer h.refreshMu.Unlock()
	_, ok := h.current[name]
	return ok
}

// TestRunSpacesRefreshes: after its first refresh Run reads the list
// again only once its spacing has passed, however many changes arrive
// meanwhile; then one read takes them all in.
func TestRunSpacesRefreshes(t *testing.T) {
	e := newEnv(t, true)
	code := e.roTools(8)
	waits, fire := runSpaced(t, e.auto)
	eventually(t, "Run's first refresh did not read the list", func() bool { return e.exposed.reads.Load() == 1 })
	var names []string
	names = append(names, e.capture(code(1)).Name)
	for waited := false; !waited; {
		select {
		case <-waits:
			waited = true
		case <-time.After(5 * time.Millisecond):
			if n := e.exposed.reads.Load(); n != 1 {
				t.Fatalf("%d reads of the list before the spacing passed, want 1", n)
			}
		}
	}
	for i := 2; i < 8; i++ {
		names = append(names, e.capture(code(i)).Name)
	}
	if n := e.exposed.reads.Load(); n != 1 {
		t.Fatalf("%d reads of the list during the spacing, want 1", n)
	}
	fire <- time.Now()
	eventually(t, "Run did not refresh once the spacing passed", func() bool { return e.exposed.reads.Load() >= 2 })
	eventually(t, "the refresh missed a change of the burst", func() bool {
		return !slices.ContainsFunc(names, func(n string) bool { return !e.auto.offered(n) })
	})
	if n := e.exposed.reads.Load(); n != 2 {
		t.Fatalf("%d reads of the list for a burst of %d changes, want 2 (the first refresh and one after the spacing)", n, len(names))
	}
}

// TestRequestRefreshesWhileRunWaits: while Run waits out its spacing, an
// MCP request that finds a change waiting refreshes before it is
// answered: the client sees the new tool at once.
func TestRequestRefreshesWhileRunWaits(t *testing.T) {
	e := newEnv(t, true)
	code := e.roTools(3)
	waits, _ := runSpaced(t, e.auto)
	s := e.connect("/mcp", "operator", nil)
	before := toolNames(t, s)
	p := e.capture(code(1))
	<-waits // Run saw the change and waits
	names := toolNames(t, s)
	if !slices.Contains(names, p.Name) || len(names) != len(before)+1 {
		t.Fatalf("after a capture, while Run waits: %v (before: %v)", names, before)
	}
	q := e.capture(code(2))
	if names := toolNames(t, s); !slices.Contains(names, q.Name) {
		t.Fatalf("after a second capture: %v", names)
	}
}

// TestHandlersShareOneRead: /mcp and /mcp/interactive, sharing an
// Exposed, read the list once per change between them, and both see it.
func TestHandlersShareOneRead(t *testing.T) {
	e := newEnv(t, true)
	code := e.roTools(3)
	auto, inter := e.connect("/mcp", "operator", nil), e.connect("/mcp/interactive", "operator", nil)
	toolNames(t, auto)
	toolNames(t, inter)
	reads := e.exposed.reads.Load()
	p := e.capture(code(1))
	for _, s := range []*mcp.ClientSession{auto, inter} {
		if names := toolNames(t, s); !slices.Contains(names, p.Name) {
			t.Fatalf("%s not listed after its capture: %v", p.Name, names)
		}
	}
	if n := e.exposed.reads.Load() - reads; n != 1 {
		t.Fatalf("%d reads of the list for one change and two handlers, want 1", n)
	}
	toolNames(t, auto)
	if n := e.exposed.reads.Load() - reads; n != 1 {
		t.Fatalf("%d reads after a request with no change, want still 1", n)
	}
}

// TestSharedReadKeepsUnchangedTools: a read keeps the previous read's
// tool where nothing a client sees changed (the handlers then tell it by
// its pointer) and builds a new one where something did (here a grant).
func TestSharedReadKeepsUnchangedTools(t *testing.T) {
	e := newEnv(t, true)
	code := e.roTools(3)
	a, b := e.capture(code(1)), e.capture(code(2))
	ctx := context.Background()
	first, err := e.exposed.list(ctx, e.rp, e.svc.Changes(), DefaultToolLimit, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: b.Name, Enabled: true, Reason: "test", Actor: "tester"}); err != nil {
		t.Fatal(err)
	}
	second, err := e.exposed.list(ctx, e.rp, e.svc.Changes(), DefaultToolLimit, false)
	if err != nil {
		t.Fatal(err)
	}
	if first.byName[a.Name] == nil || second.byName[a.Name] != first.byName[a.Name] {
		t.Fatalf("the unchanged tool %s is not the previous read's", a.Name)
	}
	if got := second.byName[b.Name]; got == first.byName[b.Name] || got.Meta[MetaAutoRun] != true {
		t.Fatalf("the granted tool %s is the previous read's (auto_run %v)", b.Name, got.Meta[MetaAutoRun])
	}
}

// TestSameValueIsDeepEqual: sameValue answers as reflect.DeepEqual on
// the values a tool's schemas and _meta hold, and on others.
func TestSameValueIsDeepEqual(t *testing.T) {
	half, half2, nan := 0.5, 0.5, math.NaN()
	type other struct{ A int }
	cases := []struct {
		name string
		a, b any
	}{
		{"nils", nil, nil},
		{"nil and a value", nil, "x"},
		{"strings", "a", "a"},
		{"other strings", "a", "b"},
		{"bools", true, false},
		{"floats", 1.0, 1.0},
		{"float and int64", 1.0, int64(1)},
		{"NaN", nan, nan},
		{"int64s", int64(3), int64(3)},
		{"pointers to equal floats", &half, &half2},
		{"a pointer and nil pointer", &half, (*float64)(nil)},
		{"nil pointers", (*float64)(nil), (*float64)(nil)},
		{"the same pointer to NaN", &nan, &nan},
		{"string slices", []string{"a", "b"}, []string{"a", "b"}},
		{"string slices apart", []string{"a", "b"}, []string{"b", "a"}},
		{"nil and empty string slices", []string(nil), []string{}},
		{"string slice and any slice", []string{"a"}, []any{"a"}},
		{"any slices", []any{"a", 1.0}, []any{"a", 1.0}},
		{"any slices of other lengths", []any{"a"}, []any{"a", "b"}},
		{"nil and empty any slices", []any(nil), []any{}},
		{"maps", map[string]any{"type": "object", "required": []any{"x"}}, map[string]any{"type": "object", "required": []any{"x"}}},
		{"maps apart deep down", map[string]any{"p": map[string]any{"x": 1.0}}, map[string]any{"p": map[string]any{"x": 2.0}}},
		{"maps of other keys", map[string]any{"a": nil}, map[string]any{"b": nil}},
		{"a map with a nil value and an empty one", map[string]any{"a": nil}, map[string]any{}},
		{"nil and empty maps", map[string]any(nil), map[string]any{}},
		{"a map and mcp.Meta", map[string]any{}, mcp.Meta{}},
		{"other types", other{1}, other{1}},
		{"other types apart", other{1}, other{2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, ab := range [][2]any{{tc.a, tc.b}, {tc.b, tc.a}} {
				if got, want := sameValue(ab[0], ab[1]), reflect.DeepEqual(ab[0], ab[1]); got != want {
					t.Fatalf("sameValue(%#v, %#v) = %v, reflect.DeepEqual %v", ab[0], ab[1], got, want)
				}
			}
		})
	}
}

// TestApprovalsDoNotRefresh: a turn's wait for an operator (ChangeApproval)
// changes no proc__ tool: a request that finds only such changes waiting
// does not reread the list; one that finds another change with them does.
func TestApprovalsDoNotRefresh(t *testing.T) {
	e := newEnv(t, true)
	code := e.roTools(3)
	s := e.connect("/mcp", "operator", nil)
	toolNames(t, s)
	reads := e.exposed.reads.Load()
	e.svc.Changes().Publish(changes.Change{Kind: changes.ChangeApproval, Turn: "t1"})
	toolNames(t, s)
	if n := e.exposed.reads.Load() - reads; n != 0 {
		t.Fatalf("%d reads of the list after an approval change, want 0", n)
	}
	e.svc.Changes().Publish(changes.Change{Kind: changes.ChangeApproval, Turn: "t2"})
	p := e.capture(code(1))
	if names := toolNames(t, s); !slices.Contains(names, p.Name) {
		t.Fatalf("a capture behind an approval change is not listed: %v", names)
	}
}
