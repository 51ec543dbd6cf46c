package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureLiftCLI: `capture --lift=false` keeps the literal, `lift
// --dry-run` says what a re-capture would lift and changes nothing, and
// `capture` lifts and prints what it lifted.
func TestCaptureLiftCLI(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	env := map[string]string{"PROCGRAPH_URL": s.URL}
	dir := t.TempDir()
	file := fileWriter(t, dir)("task.star", "s = tools.get_task_jobs_summary(task_id=42)\nreturn tools.get_retry_chain(task_id=42)\n")
	code, out, errOut := runMainWith(t, env, "capture", "--lift=false", "--session", "a", "--json", file)
	var cap struct {
		Procedure struct{ Name, Code string } `json:"procedure"`
		Lifted    []map[string]any            `json:"lifted"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &cap) != nil || len(cap.Lifted) != 0 || !strings.Contains(cap.Procedure.Code, "task_id=42") {
		t.Fatalf("capture --lift=false: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runMainWith(t, env, "lift", "--dry-run")
	if code != 0 || !strings.Contains(out, cap.Procedure.Name) || !strings.Contains(out, "-> parameter task_id (example 42)") ||
		!strings.Contains(out, "1 of 1 procedures would lift") {
		t.Fatalf("lift --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = runMainWith(t, env, "lift"); code != 2 || !strings.Contains(errOut, "never rewritten") {
		t.Fatalf("lift without --dry-run: exit %d %s", code, errOut)
	}
	code, out, errOut = runMainWith(t, env, "versions", cap.Procedure.Name)
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("the dry run changed the versions: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runMainWith(t, env, "capture", "--session", "b", filepath.Clean(file))
	if code != 0 || !strings.Contains(out, "lifted: line 1, column 41: tools.get_task_jobs_summary(task_id=…) -> parameter task_id (example 42)") ||
		!strings.Contains(out, "lifted: line 2, column 38: tools.get_retry_chain(task_id=…) -> parameter task_id") {
		t.Fatalf("capture: exit %d\n%s%s", code, out, errOut)
	}
}
