package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// workerChildren returns the pids of this process's children that are
// sandbox workers.
func workerChildren(tb testing.TB) []int {
	tb.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		tb.Fatal(err)
	}
	var pids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // state, ppid, ...
		if len(fields) < 2 || fields[0] == "Z" || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		env, err := os.ReadFile(filepath.Join(filepath.Dir(f), "environ"))
		if err == nil && bytes.Contains(env, []byte(sandbox.WorkerEnv+"=1\x00")) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// metricValue reads one sample from /metrics text, -1 when absent.
func metricValue(text, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestIdleWorkersKilledThroughMain: SIGKILL every idle sandbox worker of a
// running server. The pools notice at once (no request is made), refill
// their warm workers, and /metrics says so: live back to the warm size,
// started and crashed counted (as counters), killed (by the pool) zero.
func TestIdleWorkersKilledThroughMain(t *testing.T) {
	before := workerChildren(t)
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, Extra: []string{"--sandbox-workers", "2"}})
	var old []int
	for _, pid := range workerChildren(t) {
		if !slices.Contains(before, pid) {
			old = append(old, pid)
		}
	}
	if len(old) != 3 { // 2 warm replay workers, 1 warm nested one
		t.Fatalf("worker processes %v, want 3", old)
	}
	for _, pid := range old {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{
		`procgraph_sandbox_workers_live{pool="replay"}`:    2,
		`procgraph_sandbox_workers_idle{pool="replay"}`:    2,
		`procgraph_sandbox_workers_started{pool="replay"}`: 4,
		`procgraph_sandbox_workers_crashed{pool="replay"}`: 2,
		`procgraph_sandbox_workers_killed{pool="replay"}`:  0,
		`procgraph_sandbox_workers_live{pool="nested"}`:    1,
		`procgraph_sandbox_workers_idle{pool="nested"}`:    1,
		`procgraph_sandbox_workers_started{pool="nested"}`: 2,
		`procgraph_sandbox_workers_crashed{pool="nested"}`: 1,
		`procgraph_sandbox_workers_killed{pool="nested"}`:  0,
	}
	var text string
	for range 500 {
		text = string(s.get(t, "/metrics").Body)
		ok := true
		for series, v := range want {
			ok = ok && metricValue(text, series) == v
		}
		if ok {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for series, v := range want {
		if got := metricValue(text, series); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	for _, typ := range []string{"# TYPE procgraph_sandbox_workers_started counter", "# TYPE procgraph_sandbox_workers_crashed counter",
		"# TYPE procgraph_sandbox_workers_killed counter", "# TYPE procgraph_sandbox_workers_live gauge"} {
		if !strings.Contains(text, typ) {
			t.Errorf("/metrics lacks %q", typ)
		}
	}
	for _, pid := range workerChildren(t) {
		if slices.Contains(old, pid) {
			t.Fatalf("killed worker %d is still a child", pid)
		}
	}
	name := mustCaptureName(t, s, readOnlyCode, "setup")
	mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 200)
}
