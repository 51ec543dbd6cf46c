package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestWorkerEnvironHoldsNoSecrets(t *testing.T) {
	t.Setenv("NEO4J_PASSWORD", "s3cret")
	t.Setenv("PROCGRAPH_TOKEN", "pgt_x")
	t.Setenv("GOMAXPROCS", "2")
	env := workerEnviron()
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, secret := range []string{"NEO4J_PASSWORD", "PROCGRAPH_TOKEN"} {
		if strings.Contains(joined, "\n"+secret+"=") {
			t.Fatalf("the worker environment carries %s", secret)
		}
	}
	if !strings.Contains(joined, "\nGOMAXPROCS=2\n") {
		t.Fatalf("the Go runtime's settings must pass: %q", env)
	}
}

// TestGateFailureIsFinal: after a refused or failed call the gate refuses
// everything, and the run's outcome is the first failure whatever the block
// (or a worker that does not behave) reports.
func TestGateFailureIsFinal(t *testing.T) {
	var seen []string
	tools := ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (any, error) {
		seen = append(seen, name)
		if name == "broken" {
			return nil, errors.New("boom")
		}
		return "ok", nil
	})
	tests := []struct {
		name  string
		first string
		code  ErrorCode
	}{
		{"after a refusal", "kill_job", ToolRefused},
		{"after a tool failure", "broken", ToolFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			g := newGate([]string{"get_jobs", "broken"}, 10, tools, nil)
			if _, e := g.call(context.Background(), tc.first, nil); e == nil || e.Code != tc.code {
				t.Fatalf("first call: %v", e)
			}
			if _, e := g.call(context.Background(), "get_jobs", nil); e == nil || e.Code != ToolRefused {
				t.Fatalf("a call after the failure must be refused, got %v", e)
			}
			for _, n := range seen {
				if n == "get_jobs" {
					t.Fatal("a call after the failure reached the ToolCaller")
				}
			}
			if out := g.outcome(nil); out == nil || out.Code != tc.code {
				t.Fatalf("outcome = %v, want the first failure (%s)", out, tc.code)
			}
		})
	}
}
