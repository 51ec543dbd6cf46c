package replay_test

import (
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/sandbox"
)

// mustFailWith invokes and requires a failed run with code naming tool.
func (e *env) mustFailWith(req replay.InvokeRequest, code sandbox.ErrorCode, tool string) *replay.InvokeResult {
	e.T.Helper()
	res, err := e.Invoke(req)
	if err != nil {
		e.T.Fatalf("Invoke(%s): %v", req.Name, err)
	}
	if res.Status != replay.StatusFailed || res.Error == nil || res.Error.Code != code || res.Error.Tool != tool {
		e.T.Fatalf("Invoke(%s): status %s, error %+v; want %s on %s", req.Name, res.Status, res.Error, code, tool)
	}
	return res
}

func TestOpaqueDynamicCallRefused(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			// Statically read-only (one tool), dynamically reaching for a
			// read-only tool outside its signature: still refused.
			p := e.Capture(`jobs = tools.get_jobs(task_id=task_id)
f = getattr(tools, "fetch_" + "logs")
return f(task_id=task_id)`)
			if !p.Opaque || p.Exposed {
				t.Fatalf("opaque %v, exposed %v", p.Opaque, p.Exposed)
			}
			res := e.mustFailWith(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}},
				sandbox.ToolRefused, "fetch_logs")
			if res.Decision.Reason != audit.ReasonReadOnly || len(res.Decision.AllowedTools) != 1 {
				t.Fatalf("decision %+v", res.Decision)
			}
			if e.Upstream.Saw("fetch_logs") || !e.Upstream.Saw("get_jobs") {
				t.Fatalf("dispatched %v", e.Upstream.Tools())
			}
			if e.Get(p.Name).UseCount != 0 {
				t.Fatal("a refused run was counted")
			}
		})
	}
}

func TestEscapeFormsRefused(t *testing.T) {
	// Procedures whose decision allows only read-only tools, reaching for
	// kill_job through the forms static analysis cannot follow.
	forms := map[string]string{
		"alias":   "t = tools\nt.kill_job(job_id=1)",
		"getattr": `getattr(tools, "kill_" + "job")(job_id=1)`,
		"passed":  "def f(x):\n    return x.kill_job(job_id=1)\nf(tools)",
		"dir":     "for n in dir(tools):\n    if n.startswith(\"kill\"):\n        getattr(tools, n)(job_id=1)",
	}
	for _, rn := range runners() {
		for name, form := range forms {
			t.Run(rn.name+"/"+name, func(t *testing.T) {
				e := newEnv(t, rn.r, true)
				p := e.Capture("jobs = tools.get_jobs(task_id=task_id)\nlogs = tools.fetch_logs(task_id=task_id)\n" + form + "\nreturn jobs")
				if !p.ReadOnly {
					t.Fatalf("%s is not read-only", p.Name)
				}
				res, err := e.Invoke(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1},
					ReviewedBy: "op", ReviewerHasGrantScope: true})
				if err != nil {
					t.Fatal(err)
				}
				if res.Decision.Reason != audit.ReasonReadOnly {
					t.Fatalf("decision %+v", res.Decision)
				}
				switch {
				case name == "dir":
					// dir(tools) lists nothing (the allow-set is never
					// revealed), so the loop calls nothing and the run succeeds.
					if res.Status != replay.StatusSucceeded {
						t.Fatalf("status %s, error %+v", res.Status, res.Error)
					}
				case res.Error == nil || res.Error.Code != sandbox.ToolRefused || res.Error.Tool != "kill_job":
					t.Fatalf("status %s, error %+v", res.Status, res.Error)
				}
				if e.Upstream.Saw("kill_job") {
					t.Fatal("the dispatcher saw kill_job")
				}
			})
		}
	}
}

func TestMethodValueOfExcludedToolRefused(t *testing.T) {
	// m = tools.purge_all; m(): purge_all is in the signature, and the
	// catalogue does not know it. A replay of code that calls a tool the
	// catalogue lacks is refused before it runs (unknown_tool), even a
	// reviewed one: nothing reaches the upstream, not even its read-only
	// calls. (The sandbox refuses the call at run time too:
	// sandbox's TestRefusedAtCallTime, "bound method".)
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, true)
			p := e.Capture("jobs = tools.get_jobs(task_id=task_id)\nm = tools.purge_all\nm()\nreturn jobs")
			if len(p.UnknownTools) != 1 {
				t.Fatalf("unknown %v", p.UnknownTools)
			}
			d := e.MustDeny(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1},
				ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.ReasonUnknownTool)
			if len(d.AllowedTools) != 0 || !strings.Contains(d.Suggestion, "purge_all") {
				t.Fatalf("decision %+v", d)
			}
			if e.Upstream.Saw("purge_all") || e.Upstream.Saw("get_jobs") {
				t.Fatal("the dispatcher saw a call")
			}
		})
	}
}
