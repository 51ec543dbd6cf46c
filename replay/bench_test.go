package replay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// benchProcedure is a service over a fresh embedded store holding a
// read-only procedure making n tool calls (its name), and a dispatcher
// answering them in process.
func benchProcedure(b *testing.B, n int, noSync bool) (*procedures.Service, string, replay.Dispatcher) {
	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(b.TempDir(), "bench.db"), embedded.Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
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
	return svc, out.Procedure.Name, d
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
	svc, name, d := benchProcedure(b, n, noSync)
	rp := replay.New(svc, runner, d, opts)
	req := replay.InvokeRequest{Name: name, Phase: procedures.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "bench"}
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

// BenchmarkInvokeRecording measures what a recording adds to a warm
// replay: the same procedure invoked by a replayer keeping recordings and
// by one keeping none, over one store, interleaved (each iteration one of
// each, alternating which goes first), reporting rec-ns/op, norec-ns/op
// and their ratio. The same arguments each time: the recording is built
// and compared, and rewritten only when its content changed (never here).
func BenchmarkInvokeRecording(b *testing.B) {
	for _, n := range []int{2, 10} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			ctx := context.Background()
			svc, name, d := benchProcedure(b, n, true)
			on := replay.New(svc, sandbox.NewInProcess(), d, replay.Options{RecordResponses: true})
			off := replay.New(svc, sandbox.NewInProcess(), d, replay.Options{})
			req := replay.InvokeRequest{Name: name, Phase: procedures.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "bench"}
			invoke := func(rp *replay.Replayer) time.Duration {
				start := time.Now()
				if res, err := rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
					b.Fatalf("%+v, %v", res, err)
				}
				return time.Since(start)
			}
			invoke(on)
			invoke(off)
			var rec, norec time.Duration
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if i%2 == 0 {
					rec += invoke(on)
					norec += invoke(off)
				} else {
					norec += invoke(off)
					rec += invoke(on)
				}
				i++
			}
			b.ReportMetric(float64(rec.Nanoseconds())/float64(i), "rec-ns/op")
			b.ReportMetric(float64(norec.Nanoseconds())/float64(i), "norec-ns/op")
			b.ReportMetric(float64(rec)/float64(norec), "rec/norec")
		})
	}
}

// BenchmarkVerify measures verifying a version against one recording
// against a warm live replay of it, interleaved (each iteration one of
// each), in process on one store: verify-ns/op, invoke-ns/op and their
// ratio (aim: at most 2).
func BenchmarkVerify(b *testing.B) {
	for _, n := range []int{2, 10} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			ctx := context.Background()
			svc, name, d := benchProcedure(b, n, true)
			rp := replay.New(svc, sandbox.NewInProcess(), d, replay.Options{RecordResponses: true})
			req := replay.InvokeRequest{Name: name, Phase: procedures.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "bench"}
			if res, err := rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
				b.Fatalf("%+v, %v", res, err)
			}
			var verify, invoke time.Duration
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				ans, err := rp.Verify(ctx, name, "", "bench")
				if err != nil || ans.Verification.Status != "passed" {
					b.Fatalf("%+v, %v", ans, err)
				}
				verify += time.Since(start)
				start = time.Now()
				if res, err := rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
					b.Fatalf("%+v, %v", res, err)
				}
				invoke += time.Since(start)
				i++
			}
			b.ReportMetric(float64(verify.Nanoseconds())/float64(i), "verify-ns/op")
			b.ReportMetric(float64(invoke.Nanoseconds())/float64(i), "invoke-ns/op")
			b.ReportMetric(float64(verify)/float64(invoke), "verify/invoke")
		})
	}
}
