package main

import (
	"strings"
	"sync"
	"testing"
)

// TestLargeToolArgumentsDoNotGrowTheServer reproduces issue 8's first
// finding against a real server process: a read-only procedure passing a
// 60 MB string to a tool, 8 calls at once. Each replay fails with
// runtime_error naming the per-call limit, the upstream sees nothing, and
// the server's peak resident memory grows by far less than one copy of
// the argument per call (before the bound it grew by ~300 MB per call).
func TestLargeToolArgumentsDoNotGrowTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	up := mustUpstream(t)
	s := mustServeProcess(t, serverOpts{Upstream: up, Data: t.TempDir() + "/p.db", Extra: []string{"--sandbox-workers", "8"}}.args(t))
	name := mustCaptureName(t, s.server, "s = 'x' * (60000000 + task_id)\nr = tools.get_task_jobs_summary(task_id=s)\nreturn len(s)", "setup")
	// Warm up the paths once, so the baseline holds what any invoke allocates.
	mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 0}, "phase": "automatic"}), 200)
	before := s.rss(t)
	var wg sync.WaitGroup
	replies := make([]reply, 8)
	for i := range replies {
		wg.Go(func() {
			replies[i] = s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": i}, "phase": "automatic"})
		})
	}
	wg.Wait()
	peak := procStatus(t, s.cmd.Process.Pid, "VmHWM")
	for i, r := range replies {
		out := mustStatus(t, r, 200)
		e, _ := out["error"].(map[string]any)
		if out["status"] != "failed" || e["code"] != "runtime_error" || !strings.Contains(e["message"].(string), "per-call limit") {
			t.Errorf("replay %d: %s", i, r.Body)
		}
	}
	up.mustSeeNothing(t, "arguments over the per-call limit")
	t.Logf("server RSS before %d MiB, peak %d MiB, after %d MiB", before>>20, peak>>20, s.rss(t)>>20)
	if grown := peak - before; grown > 200<<20 {
		t.Fatalf("the server's peak RSS grew by %d MiB for 8 calls of 60 MB", grown>>20)
	}
}
