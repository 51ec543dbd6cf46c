package replay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/signature"
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
	req := replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "bench"}
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
			req := replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "bench"}
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
			req := replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "bench"}
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

// BenchmarkVerifyAll measures verifying every one of n versions against
// its 3 recordings (what procgraph verify --all does, without HTTP), in
// process on an embedded store: one op is the whole pass; it reports
// per-recording-ms. Run with -benchtime 1x.
func BenchmarkVerifyAll(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("versions=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st, err := embedded.Open(filepath.Join(b.TempDir(), "bench.db"), embedded.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			svc := procedures.NewService(st, procedures.Options{})
			if _, err := svc.PutCatalogue(ctx, replaytest.DefaultTools, "tester"); err != nil {
				b.Fatal(err)
			}
			up := &replaytest.Recorder{}
			rp := replay.New(svc, sandbox.NewInProcess(), up, replay.Options{RecordResponses: true})
			first, err := svc.Capture(ctx, procedures.CaptureRequest{Code: replaytest.ReadOnlyCode})
			if err != nil {
				b.Fatal(err)
			}
			name := first.Procedure.Name
			if res, err := rp.Invoke(ctx, replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "s"}); err != nil || res.Status != replay.StatusSucceeded {
				b.Fatalf("%+v, %v", res, err)
			}
			recs, _, err := svc.Recordings(ctx, name, "", recording.MaxRecordingsPage, 0)
			if err != nil || len(recs) != 1 {
				b.Fatalf("%v, %v", recs, err)
			}
			rec := recs[0]
			var hashes []string
			for i := range n {
				out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: fmt.Sprintf("%s\n\"version %d\"", replaytest.ReadOnlyCode, i)})
				if err != nil {
					b.Fatal(err)
				}
				if !out.VersionCreated {
					b.Fatal("no new version")
				}
				hash := versionHash(fmt.Sprintf("%s\n\"version %d\"", replaytest.ReadOnlyCode, i))
				hashes = append(hashes, hash)
				for task := range 3 {
					calls := make([]recording.RecordedCall, len(rec.Calls))
					for j, c := range rec.Calls {
						calls[j] = recording.RecordedCall{Tool: c.Tool, Arguments: map[string]any{"task_id": 42 + task}, Response: c.Response}
					}
					r, err := recording.NewRecording(name, hash, map[string]any{"task_id": 42 + task}, calls,
						map[string]any{"jobs": rec.Calls[0].Response, "logs": rec.Calls[1].Response}, time.Now())
					if err != nil {
						b.Fatal(err)
					}
					if _, err := st.RecordUse(ctx, procedures.UseInput{Name: name, CodeHash: hash, UsageKey: fmt.Sprintf("k%d", task), Replay: true,
						At: time.Now(), Recording: r, KeepRecordings: 3}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				for _, h := range hashes {
					ans, err := rp.Verify(ctx, name, h, "bench")
					if err != nil || ans.Verification.Status != "passed" || ans.Verification.Recordings != 3 {
						b.Fatalf("%s: %+v, %v", h, ans, err)
					}
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N*n*3), "per-recording-ms")
		})
	}
}

// versionHash is the code hash a capture of code stores.
func versionHash(code string) string {
	a, err := signature.Analyze(code, signature.Starlark)
	if err != nil {
		panic(err)
	}
	return a.CodeHash
}
