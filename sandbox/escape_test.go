package sandbox_test

import (
	"reflect"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// TestRefusedAtCallTime: however the block reaches kill_job, the call is
// refused by the gate and never reaches the ToolCaller; the allowed calls
// made before it did.
func TestRefusedAtCallTime(t *testing.T) {
	tests := []struct {
		name string
		src  string
	}{
		{"direct", "tools.get_jobs()\ntools.kill_job(id=1)"},
		{"bound method", "tools.get_jobs()\nm = tools.kill_job\nm()"},
		{"aliased tools", "tools.get_jobs()\nt = tools\nt.kill_job()"},
		{"getattr with a computed name", "tools.get_jobs()\ngetattr(tools, 'kill_' + 'job')()"},
		{"tools passed to a function", "def f(t):\n    return t.kill_job(id=1)\ntools.get_jobs()\nf(tools)"},
		{"lambda", "k = lambda: tools.kill_job()\ntools.get_jobs()\nk()"},
		{"list comprehension", "tools.get_jobs()\n[tools.kill_job(id=i) for i in range(3)]"},
		{"method stored in a dict", "d = {'f': getattr(tools, 'kill_job')}\ntools.get_jobs()\nd['f']()"},
		{"after an allowed call in a loop", "for n in ['get_jobs', 'kill_job']:\n    getattr(tools, n)()"},
	}
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					rec := &recorder{}
					res := run(t, m.runner, tc.src, nil, []string{"get_jobs"}, sandbox.Limits{}, rec)
					if res.Err == nil || res.Err.Code != sandbox.ToolRefused || res.Err.Tool != "kill_job" {
						t.Fatalf("error = %s, want tool_refused for kill_job", errString(res.Err))
					}
					if got := rec.seen(); !reflect.DeepEqual(got, []string{"get_jobs"}) {
						t.Errorf("tool caller saw %v, want only [get_jobs]", got)
					}
					want := []sandbox.Call{{Tool: "get_jobs", OK: true}, {Tool: "kill_job", OK: false}}
					for i := range res.Calls {
						res.Calls[i].DurationMS = 0
					}
					if !reflect.DeepEqual(res.Calls, want) {
						t.Errorf("calls = %+v, want %+v", res.Calls, want)
					}
				})
			}
		})
	}
}

// TestToolsRevealsNothing: attribute lookups never fail and list nothing.
func TestToolsRevealsNothing(t *testing.T) {
	src := `return [dir(tools), hasattr(tools, "anything"), str(tools.x), type(tools)]`
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			res := run(t, m.runner, src, nil, []string{"x"}, sandbox.Limits{}, nil)
			want := []any{[]any{}, true, "<tool x>", "tools"}
			if res.Err != nil || !reflect.DeepEqual(res.Value, want) {
				t.Fatalf("got %#v, %s; want %#v", res.Value, errString(res.Err), want)
			}
		})
	}
}
