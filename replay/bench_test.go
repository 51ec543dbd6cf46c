package replay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// benchCode returns a read-only procedure making n tool calls.
func benchCode(n int) string {
	var b strings.Builder
	b.WriteString("out = []\n")
	for i := range n {
		tool := "get_jobs"
		if i%2 == 1 {
			tool = "fetch_logs"
		}
		fmt.Fprintf(&b, "out.append(tools.%s(task_id=task_id, i=%d))\n", tool, i)
	}
	b.WriteString("return out")
	return b.String()
}

// BenchmarkInvoke measures a library replay end to end: load and classify
// from the embedded store, re-analysis, argument validation, the recorded
// decision, the sandbox run with n in-process tool calls, and the count.
func BenchmarkInvoke(b *testing.B) {
	for _, rn := range []struct {
		name string
		r    sandbox.Runner
	}{{"inprocess", sandbox.NewInProcess()}, {"pool", pool}} {
		for _, n := range []int{2, 10} {
			for _, sync := range []bool{false, true} {
				name := fmt.Sprintf("%s/calls=%d", rn.name, n)
				if sync {
					if rn.name == "pool" || n == 10 {
						continue
					}
					name += "/fsync"
				}
				b.Run(name, func(b *testing.B) { benchInvoke(b, rn.r, n, !sync, replay.Options{}) })
			}
		}
	}
}

// BenchmarkInvokeAdmission: the same replay (2 calls) with and without
// admission in front (one absolute deadline, a slot, the per-key count).
func BenchmarkInvokeAdmission(b *testing.B) {
	for _, rn := range []struct {
		name string
		r    sandbox.Runner
	}{{"inprocess", sandbox.NewInProcess()}, {"pool", pool}} {
		b.Run(rn.name+"/without", func(b *testing.B) { benchInvoke(b, rn.r, 2, true, replay.Options{}) })
		b.Run(rn.name+"/with", func(b *testing.B) {
			benchInvoke(b, rn.r, 2, true, replay.Options{Admission: sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 8, PerKey: 8})})
		})
	}
}

func benchInvoke(b *testing.B, runner sandbox.Runner, n int, noSync bool, opts replay.Options) {
	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(b.TempDir(), "bench.db"), embedded.Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := procedures.NewService(st, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, replaytest.DefaultTools, "tester"); err != nil {
		b.Fatal(err)
	}
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: benchCode(n)})
	if err != nil {
		b.Fatal(err)
	}
	d := replay.NewFuncDispatcher(map[string]replay.ToolFunc{
		"get_jobs": func(ctx context.Context, args map[string]any) (any, error) {
			return map[string]any{"jobs": []any{"a", "b"}}, nil
		},
		"fetch_logs": func(ctx context.Context, args map[string]any) (any, error) { return "log line", nil },
	})
	rp := replay.New(svc, runner, d, opts)
	req := replay.InvokeRequest{Name: out.Procedure.Name, Phase: procedures.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "bench"}
	if res, err := rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
		b.Fatalf("warm-up: %+v, %v", res, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := rp.Invoke(ctx, req)
		if err != nil || res.Status != replay.StatusSucceeded {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}
