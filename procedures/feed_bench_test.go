package procedures_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/procedures"
)

// BenchmarkRecord compares a decision through the Recorder (build, audit
// check, append, count) with the bare store append it wraps.
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"store-append", "recorder"} {
		b.Run(mode, func(b *testing.B) {
			store := openStore(b)
			svc := procedures.NewService(store, procedures.Options{})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := validInvoke()
				var err error
				if mode == "recorder" {
					_, err = svc.Recorder().Record(ctx, d)
				} else {
					d, err = procedures.NewRecorder(nil, procedures.RecorderOptions{}).Build(d)
					if err == nil {
						err = store.AppendDecision(ctx, d)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckAudit is the audit rule's cost on a typical invoke record.
func BenchmarkCheckAudit(b *testing.B) {
	d, err := procedures.NewRecorder(nil, procedures.RecorderOptions{}).Build(validInvoke())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := procedures.CheckAudit(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFeedPublish is a writer's cost of publishing with n subscribers
// that never take (so every queue is full and coalescing).
func BenchmarkFeedPublish(b *testing.B) {
	for _, n := range []int{0, 1, 16} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			f := changes.NewFeed()
			for i := 0; i < n; i++ {
				defer f.Subscribe(0).Close()
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f.Publish(changes.Change{Kind: changes.ChangeCapture, Procedure: "proc__x"})
			}
		})
	}
}

// BenchmarkExposedMarker is one WatchRemote look at 500 exposed
// procedures (what each poll costs).
func BenchmarkExposedMarker(b *testing.B) {
	ctx := context.Background()
	store := openStore(b)
	svc := procedures.NewService(store, procedures.Options{})
	var tools []procedures.Tool
	for i := 0; i < 32; i++ {
		tools = append(tools, procedures.Tool{Name: fmt.Sprintf("t%02d", i), ReadOnly: true})
	}
	if _, err := svc.PutCatalogue(ctx, tools, "bench"); err != nil {
		b.Fatal(err)
	}
	n := 0
	for i := 0; i < 32 && n < 500; i++ {
		for j := i + 1; j < 32 && n < 500; j++ {
			code := fmt.Sprintf("a = tools.t%02d(x=x)\nreturn tools.t%02d(y=a)\n", i, j)
			if _, err := svc.Capture(ctx, procedures.CaptureRequest{Code: code}); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := procedures.ExposedMarker(ctx, svc); err != nil {
			b.Fatal(err)
		}
	}
}
