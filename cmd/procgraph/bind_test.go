package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bindActors is a server with tokens for the binding boundary suite: an
// agent (read, invoke, capture), an operator (read, grant) and an admin
// (catalogue changes).
type bindActors struct {
	*turnActors
	admin string
}

func mustBindServer(t *testing.T, up *upstream, mutating bool) *bindActors {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tokens.json")
	a := &bindActors{turnActors: &turnActors{
		agent: mustCreateToken(t, file, "agent", "read,invoke,capture"),
		op:    mustCreateToken(t, file, "op", "read,grant"),
	}, admin: mustCreateToken(t, file, "admin", "read,admin")}
	// The suites leave many turns of the one agent pending.
	a.server = mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: mutating,
		Extra: []string{"--max-pending-per-requester", "32"}})
	a.server.token = a.agent
	return a
}

// stateChanging are the catalogue's state-changing tools.
var stateChanging = []string{"kill_job", "retry_task", "record_note"}

// mustSeeNoneOf fails when the upstream saw any of tools since its reset.
func (u *upstream) mustSeeNoneOf(tb testing.TB, what string, tools ...string) {
	tb.Helper()
	for _, got := range u.tools() {
		if slices.Contains(tools, got) {
			tb.Fatalf("%s: the upstream saw %s (all: %v)", what, got, u.tools())
		}
	}
}

func turnBody(code, dialect, session string) map[string]any {
	return map[string]any{"code": code, "dialect": dialect, "session_id": session, "phase": "interactive"}
}

// approveAutoRun has the operator resolve pending turn id auto_run and the
// agent run it.
func (a *bindActors) approveAutoRun(t *testing.T, id string) map[string]any {
	t.Helper()
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "auto_run", "reason": "reviewed"}), 200)
	return mustStatus(t, a.run(t, a.agent, id), 200)
}

var dialects = []string{"starlark", "python-async"}

// TestBindLineSeparatorTwins: issue 19 item 1 through the real server, in
// both dialects, with mutating auto-run off. A block whose comment line
// ends, for code_hash only, at a line separator is refused (422
// invalid_code, feature line_separator, at its line and column), so nothing
// can approve it; its twin with a newline — same code_hash, calls kill_job —
// is reviewed, never run by a policy. Blocks whose triple-quoted strings
// differ only in blank lines or trailing spaces (one code_hash, two
// programs): approving one auto_run leaves the other reviewed. The
// recording upstream sees no state-changing call.
func TestBindLineSeparatorTwins(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustBindServer(t, up, false)
	seps := []struct{ name, sep string }{
		{"VT", "\v"}, {"FF", "\f"}, {"FS", "\x1c"}, {"GS", "\x1d"}, {"RS", "\x1e"},
		{"NEL", "\u0085"}, {"LS", "\u2028"}, {"PS", "\u2029"}, {"lone CR", "\r"},
	}
	twin := func(sep string) string {
		return "x = tools.get_task_jobs_summary(task_id=1)\n# note" + sep + "tools.kill_job(panda_id=666)\nreturn x\n"
	}
	n := 0
	for _, d := range dialects {
		for _, s := range seps {
			t.Run(d+"/"+s.name, func(t *testing.T) {
				n++
				session := fmt.Sprintf("sep-%d", n)
				up.reset()
				r := a.submit(t, turnBody(twin(s.sep), d, session))
				if r.Status == 202 {
					t.Errorf("the block with %s was accepted for review: %s", s.name, r.Body)
					a.approveAutoRun(t, r.JSON(t)["turn"].(map[string]any)["id"].(string))
				} else {
					det := mustError(t, r, 422, "invalid_code")
					if det["feature"] != "line_separator" || num(det["line"]) != 2 || num(det["column"]) != 7 {
						t.Fatalf("details %v, want feature line_separator at line 2, column 7", det)
					}
				}
				out := mustStatus(t, a.submit(t, turnBody(twin("\n"), d, session)), 202)
				if st := out["turn"].(map[string]any)["status"]; st != "pending" {
					t.Fatalf("the twin is %v, want pending (reviewed)", st)
				}
				up.mustSeeNoneOf(t, "the twin", stateChanging...)
			})
		}
	}
	strings2 := []struct{ name, a, b string }{
		{"blank line", "'''a\nb'''", "'''a\n\nb'''"},
		{"trailing spaces", "'''a\nb'''", "'''a   \nb'''"},
	}
	for _, d := range dialects {
		for _, s := range strings2 {
			t.Run(d+"/string twin/"+s.name, func(t *testing.T) {
				n++
				session := fmt.Sprintf("str-%d", n)
				code := func(lit string) string {
					return "s = " + lit + "\nx = tools.get_task_jobs_summary(task_id=1)\nif s != \"a\\nb\":\n    tools.kill_job(panda_id=666)\nreturn x\n"
				}
				up.reset()
				id := a.mustPending(t, turnBody(code(s.a), d, session))
				a.approveAutoRun(t, id)
				up.mustSeeNoneOf(t, "the approved block", stateChanging...)
				hash := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)["code_hash"]
				out := mustStatus(t, a.submit(t, turnBody(code(s.b), d, session)), 202)
				turn := out["turn"].(map[string]any)
				if turn["status"] != "pending" || turn["code_hash"] != hash {
					t.Fatalf("the twin is %v with code hash %v, want pending with the approved block's %v", turn["status"], turn["code_hash"], hash)
				}
				up.mustSeeNoneOf(t, "the twin", stateChanging...)
				// The approved block itself still runs by its policy.
				again := mustStatus(t, a.submit(t, turnBody(code(s.a), d, session)), 200)
				dec := again["decision"].(map[string]any)
				if dec["reason"] != "session_policy" || !strings.HasPrefix(fmt.Sprint(dec["note"]), "binding sha256:") {
					t.Fatalf("the approved block again: decision %v, want session_policy naming its binding", dec)
				}
				up.mustSeeNoneOf(t, "the approved block again", stateChanging...)
			})
		}
	}
}

// TestBindCatalogueChange: issue 19 item 2 (a) through the real server. A
// session policy set on a read-only block, and a durable grant on a
// read-only procedure, stop applying once a catalogue change (PUT
// /v1/tools) makes a tool of theirs state-changing (reclassified) or
// changes its contract (catalogue_drift): the block is reviewed again, the
// replay needs a review, and the recording upstream sees nothing.
func TestBindCatalogueChange(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustBindServer(t, up, true)
	cat := mustStatus(t, a.as(t, a.admin, "GET", "/v1/tools", nil), 200)
	tools := cat["tools"].([]any)
	putCatalogue := func(edit func(tool map[string]any)) {
		t.Helper()
		next := make([]any, len(tools))
		for i, tl := range tools {
			m := map[string]any{}
			for k, v := range tl.(map[string]any) {
				m[k] = v
			}
			if m["name"] == "get_retry_chain" {
				edit(m)
			}
			next[i] = m
		}
		mustStatus(t, a.as(t, a.admin, "PUT", "/v1/tools", map[string]any{"tools": next}), 200)
	}
	block := "x = tools.get_retry_chain(task_id=1)\ny = tools.get_task_jobs_summary(task_id=1)\nreturn [x, y]\n"
	proc := mustCaptureName(t, a.server, "x = tools.get_retry_chain(task_id=task_id)\ny = tools.get_task_jobs_summary(task_id=task_id)\nreturn [x, y]", "cap")
	grant := func() {
		t.Helper()
		mustStatus(t, a.as(t, a.op, "PUT", "/v1/procedures/"+proc+"/auto-run", map[string]any{"enabled": true, "reason": "reviewed"}), 200)
	}
	cases := []struct {
		name   string
		edit   func(tool map[string]any)
		reason string
	}{
		{"made state-changing", func(tl map[string]any) { tl["read_only"] = false }, "reclassified"},
		{"contract changed", func(tl map[string]any) {
			tl["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}}}
		}, "catalogue_drift"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := fmt.Sprintf("cat-%d", i)
			for _, d := range dialects {
				a.approveAutoRun(t, a.mustPending(t, turnBody(block, d, session+d)))
			}
			grant()
			if ar := mustStatus(t, a.get(t, "/v1/procedures/"+proc), 200)["auto_run"].(map[string]any); ar["active"] != true {
				t.Fatalf("the grant is %v before the change", ar)
			}
			if ps := mustStatus(t, a.get(t, "/v1/sessions/"+session+"starlark/policies"), 200)["policies"].([]any); len(ps) != 1 ||
				ps[0].(map[string]any)["inactive_reason"] != nil {
				t.Fatalf("policies before the change: %v, want one active", ps)
			}
			putCatalogue(c.edit)
			t.Cleanup(func() { putCatalogue(func(map[string]any) {}) }) // the catalogue as it was
			up.reset()
			for _, d := range dialects {
				out := mustStatus(t, a.submit(t, turnBody(block, d, session+d)), 202)
				if st := out["turn"].(map[string]any)["status"]; st != "pending" {
					t.Fatalf("%s: the block after the change is %v, want pending", d, st)
				}
			}
			for _, d := range dialects {
				pol := mustStatus(t, a.get(t, "/v1/sessions/"+session+d+"/policies"), 200)
				ps := pol["policies"].([]any)
				if len(ps) != 1 || ps[0].(map[string]any)["inactive_reason"] != c.reason {
					t.Fatalf("%s: policies %v, want one inactive, %s", d, ps, c.reason)
				}
				for _, g := range pol["grants"].([]any) {
					if g := g.(map[string]any); g["procedure"] == proc && (g["active"] != false || g["inactive_reason"] != c.reason) {
						t.Fatalf("grants list: %v, want %s inactive, %s", g, proc, c.reason)
					}
				}
			}
			ar := mustStatus(t, a.get(t, "/v1/procedures/"+proc), 200)["auto_run"].(map[string]any)
			if ar["active"] != false || ar["inactive_reason"] != c.reason {
				t.Fatalf("the grant after the change: %v, want inactive, %s", ar, c.reason)
			}
			r := a.invoke(t, proc, map[string]any{"phase": "interactive", "arguments": map[string]any{"task_id": 1}})
			if c.reason == "reclassified" {
				det := mustError(t, r, 403, "denied")
				if d := det["decision"].(map[string]any); d["reason"] != "review_required" {
					t.Fatalf("the replay after the change: %v, want review_required", d)
				}
				up.mustSeeNothing(t, "after the change")
			} else if d := mustStatus(t, r, 200)["decision"].(map[string]any); d["reason"] != "read_only" {
				t.Fatalf("the read-only replay after a contract change: %v", d)
			}
			up.mustSeeNoneOf(t, "after the change", stateChanging...)
			// Granting again binds anew.
			if c.reason == "reclassified" {
				grant()
				if ar := mustStatus(t, a.get(t, "/v1/procedures/"+proc), 200)["auto_run"].(map[string]any); ar["active"] != true {
					t.Fatalf("the grant given again is %v", ar)
				}
			}
		})
	}
}

// TestBindNestedCapturedLater: issue 19 item 2 (b) through the real
// server, mutating auto-run on. A block approved while the proc__ it calls
// did not exist — auto_run, and run_once with the capture landing before
// the run — never runs that procedure once the agent captured it with
// kill_job inside: the next turn is reviewed again (auto_run) and the
// approved turn is denied nested_changed (run_once). No decision says
// operator_reviewed for it, and the upstream never sees kill_job.
func TestBindNestedCapturedLater(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		for _, choice := range []string{"auto_run", "run_once"} {
			t.Run(d+"/"+choice, func(t *testing.T) {
				up := mustUpstream(t)
				a := mustBindServer(t, up, true)
				inner := "s = tools.get_task_jobs_summary(task_id=task_id)\ntools.kill_job(panda_id=task_id)\nreturn s"
				name := "proc__get_task_jobs_summary__kill_job"
				block := "x = tools.get_retry_chain(task_id=1)\ny = tools." + name + "(task_id=1)\nreturn [x, y]\n"
				id := a.mustPending(t, turnBody(block, d, "n"))
				mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": choice, "reason": "reviewed"}), 200)
				if choice == "auto_run" {
					mustStatus(t, a.run(t, a.agent, id), 200) // the nested call fails: no such procedure
				}
				if got := mustCaptureName(t, a.server, inner, "agent-session"); got != name {
					t.Fatalf("captured %s, want %s", got, name)
				}
				up.reset()
				if choice == "auto_run" {
					out := mustStatus(t, a.submit(t, turnBody(block, d, "n")), 202)
					if st := out["turn"].(map[string]any)["status"]; st != "pending" {
						t.Fatalf("the block after the capture is %v, want pending", st)
					}
				} else {
					det := mustError(t, a.run(t, a.agent, id), 403, "denied")
					if dec := det["decision"].(map[string]any); dec["reason"] != "nested_changed" {
						t.Fatalf("the approved turn after the capture: %v, want denied nested_changed", dec)
					}
					turn := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)
					if turn["status"] != "denied" {
						t.Fatalf("the turn is %v, want denied", turn["status"])
					}
				}
				up.mustSeeNoneOf(t, "after the capture", stateChanging...)
				for _, dec := range a.decisions(t, "procedure="+name) {
					if dec["outcome"] == "allowed" {
						t.Fatalf("a decision allowed %s that nobody reviewed: %v", name, dec)
					}
				}
			})
		}
	}
}

// TestBindEditedApproval: an approval resolved with replacement code binds
// the turn to what the operator wrote: it runs, named by the replacement's
// binding, while the block as submitted never does.
func TestBindEditedApproval(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustBindServer(t, up, false)
	id := a.mustPending(t, turnBody("tools.kill_job(panda_id=666)\nreturn tools.get_task_jobs_summary(task_id=1)\n", "starlark", "edit"))
	edited := "return tools.get_task_jobs_summary(task_id=2)\n"
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once", "code": edited}), 200)
	up.reset()
	out := mustStatus(t, a.run(t, a.agent, id), 200)
	dec := out["decision"].(map[string]any)
	if dec["reason"] != "operator_approved" || !strings.HasPrefix(fmt.Sprint(dec["note"]), "binding sha256:") {
		t.Fatalf("decision %v, want operator_approved naming its binding", dec)
	}
	if got := up.tools(); !slices.Equal(got, []string{"get_task_jobs_summary"}) {
		t.Fatalf("the upstream saw %v, want the edited block's one call", got)
	}
}

// TestBindResolveAfterChange: an approval whose block changed meaning
// between its submission and its resolution (the proc__ it calls was
// captured meanwhile) is not resolved: 409 with the reason, the approval
// stays pending as the block now analyses (the nested procedure listed as
// state-changing), and only a resolution of that runs it.
func TestBindResolveAfterChange(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustBindServer(t, up, true)
	name := "proc__get_task_jobs_summary__kill_job"
	block := "x = tools.get_retry_chain(task_id=1)\ny = tools." + name + "(task_id=1)\nreturn [x, y]\n"
	id := a.mustPending(t, turnBody(block, "starlark", "r"))
	mustCaptureName(t, a.server, "s = tools.get_task_jobs_summary(task_id=task_id)\ntools.kill_job(panda_id=task_id)\nreturn s", "agent-session")
	up.reset()
	det := mustError(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 409, "conflict")
	if det["reason"] != "nested_changed" {
		t.Fatalf("details %v, want reason nested_changed", det)
	}
	ap := mustStatus(t, a.as(t, a.op, "GET", "/v1/approvals/"+id, nil), 200)
	if ap["status"] != "pending" || !slices.Contains(toStrings(ap["state_changing_tools"]), name) {
		t.Fatalf("approval %v, want pending with %s state-changing", ap, name)
	}
	up.mustSeeNothing(t, "the refused resolution")
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 200)
	out := mustStatus(t, a.run(t, a.agent, id), 200)
	if out["status"] != "succeeded" || !slices.Contains(up.tools(), "kill_job") {
		t.Fatalf("the run approved as it now is: %v (upstream %v)", out, up.tools())
	}
	// The nested call's decision names the reviewer and the binding they approved.
	ds := a.decisions(t, "procedure="+name)
	if len(ds) == 0 || ds[0]["reason"] != "operator_reviewed" || !strings.Contains(fmt.Sprint(ds[0]["note"]), "reviewed by op, binding sha256:") {
		t.Fatalf("nested decisions %v, want operator_reviewed naming the reviewer and the binding", ds)
	}
}
