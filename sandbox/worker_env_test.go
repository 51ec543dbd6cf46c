package sandbox_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// TestWorkerEnvironment: a worker runs untrusted code, so it gets only what
// the Go runtime reads from the server's environment (PATH, HOME, GO*, …):
// never the store's credentials, procgraph's settings or anything else.
func TestWorkerEnvironment(t *testing.T) {
	t.Setenv("NEO4J_PASSWORD", "store-secret")
	t.Setenv("PROCGRAPH_TOKENS_FILE", "/etc/procgraph/tokens.json")
	t.Setenv("UPSTREAM_API_KEY", "upstream-secret")
	t.Setenv("GODEBUG", "madvdontneed=1")
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// A run first: the worker that served it is idle afterwards.
	res := p.Run(context.Background(), sandbox.Request{Filename: "env.star", Source: "return 1", Limits: sandbox.Limits{Timeout: 20 * time.Second}}, nil)
	if res.Err != nil {
		t.Fatalf("run: %+v", res.Err)
	}
	var pids []int
	for deadline := time.Now().Add(20 * time.Second); len(pids) == 0 && time.Now().Before(deadline); {
		if pids = sandbox.IdlePIDs(p); len(pids) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if len(pids) == 0 {
		t.Fatal("no idle worker")
	}
	for _, pid := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatalf("worker %d's environment: %v", pid, err)
		}
		env := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if !slices.Contains(env, "GODEBUG=madvdontneed=1") || !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
			t.Fatalf("worker %d lacks what the runtime reads: %q", pid, env)
		}
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if name == "NEO4J_PASSWORD" || name == "PROCGRAPH_TOKENS_FILE" || name == "UPSTREAM_API_KEY" {
				t.Errorf("worker %d received %s", pid, name)
			}
		}
	}
}
