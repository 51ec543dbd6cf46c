package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
)

// BatchCapturer is implemented by stores that can apply many captures in one
// transaction, with the same rules as Capture. Fill uses it to build large
// fixtures quickly; without it, Fill calls Capture from a few goroutines.
type BatchCapturer interface {
	CaptureBatch(ctx context.Context, ins []procedures.CaptureInput) error
}

var benchSeq atomic.Int64

// benchKey returns a usage key no other benchmark iteration uses.
func benchKey() string {
	return fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), benchSeq.Add(1))
}

func benchCaptureInput(i int64) procedures.CaptureInput {
	sig := []string{fmt.Sprintf("bench_a%02d", i%100), "bench_z"}
	in := WithCause(In(sig, fmt.Sprintf("h%d", i%3), benchKey(), Base.Add(time.Duration(i)*time.Millisecond)), fmt.Sprintf("cause %d", i%10), "")
	in.Version.Summary = "benchmark procedure"
	return in
}

// BenchCapture measures sequential captures: 100 procedures, 3 versions and
// 10 causes each, every capture under a fresh usage key.
func BenchCapture(b *testing.B, s procedures.Store) {
	b.ReportAllocs()
	var i int64
	for b.Loop() {
		if _, err := s.Capture(context.Background(), benchCaptureInput(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchCaptureParallel measures captures from goroutines goroutines at once,
// like BenchCapture.
func BenchCaptureParallel(b *testing.B, s procedures.Store, goroutines int) {
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for g := 0; g < goroutines; g++ {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				if _, err := s.Capture(context.Background(), benchCaptureInput(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// fillInput is the capture of fixture procedure i (with key k): signatures of
// three tools from three vocabularies, so the names are distinct, and the
// a-tools with an odd number are not read-only.
func fillInput(i, k int) procedures.CaptureInput {
	sig := []string{fmt.Sprintf("fa_%03d", i%200), fmt.Sprintf("fb_%03d", (i/200)%200), fmt.Sprintf("fc_%03d", i/40000)}
	in := Real(sig, fmt.Sprintf("h%d", i), fmt.Sprintf("fill-%d-%d", i, k), Base.Add(time.Duration(i)*time.Millisecond))
	if i%50 == 0 {
		in = WithCause(in, fmt.Sprintf("cause %d", i%7), "")
	}
	return in
}

// fillCatalogue is the catalogue of the fixture Fill builds: the a-tools
// with an odd number are not read-only.
func fillCatalogue() *procedures.Catalogue {
	var tools []procedures.Tool
	for j := 0; j < 200; j++ {
		tools = append(tools,
			procedures.Tool{Name: fmt.Sprintf("fa_%03d", j), ReadOnly: j%2 == 0},
			procedures.Tool{Name: fmt.Sprintf("fb_%03d", j), ReadOnly: true},
			procedures.Tool{Name: fmt.Sprintf("fc_%03d", j), ReadOnly: true})
	}
	c, err := procedures.NewCatalogue(tools)
	if err != nil {
		panic(err)
	}
	return c
}

// Fill makes s hold at least n procedures, adding fixture procedures (every
// tenth captured twice, so frequencies differ). It is idempotent.
func Fill(tb testing.TB, s procedures.Store, n int) {
	tb.Helper()
	// The catalogue first: each procedure is classified as it is created.
	MustPutCatalogue(tb, s, fillCatalogue())
	_, have := MustFind(tb, s, procedures.Query{Limit: 1})
	if have >= n {
		return
	}
	var ins []procedures.CaptureInput
	for i := have; i < n; i++ {
		ins = append(ins, fillInput(i, 0))
		if i%10 == 0 {
			ins = append(ins, fillInput(i, 1))
		}
	}
	const batch = 2000
	if bc, ok := s.(BatchCapturer); ok {
		for len(ins) > 0 {
			m := min(batch, len(ins))
			if err := bc.CaptureBatch(context.Background(), ins[:m]); err != nil {
				tb.Fatalf("CaptureBatch: %v", err)
			}
			ins = ins[m:]
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(ins)) {
					return
				}
				if _, err := s.Capture(context.Background(), ins[i]); err != nil {
					tb.Errorf("Capture: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchFind fills s to n procedures (see Fill) and measures Find pages of 25:
// unfiltered (top), exposed and read-only (filters on the kept class: the
// total is a sum of class counts), and by one tool (an index); and the
// service's Find with exposed=true, as GET /v1/procedures?exposed=true
// runs it (page, total and classification of the page).
func BenchFind(b *testing.B, s procedures.Store, n int) {
	start := time.Now()
	Fill(b, s, n)
	b.Logf("fill to %d procedures: %v", n, time.Since(start).Round(time.Millisecond))
	queries := []struct {
		name string
		q    procedures.Query
	}{
		{"top25", procedures.Query{Limit: 25}},
		{"top25_offset500", procedures.Query{Limit: 25, Offset: 500}},
		{"exposed25", procedures.Query{Limit: 25, Exposed: ptr(true)}},
		{"exposed25_no_total", procedures.Query{Limit: 25, Exposed: ptr(true), SkipTotal: true}},
		{"not_read_only25", procedures.Query{Limit: 25, ReadOnly: ptr(false)}},
		{"tool25", procedures.Query{Limit: 25, Tools: []string{"fa_002"}}},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ps, total, err := s.Find(context.Background(), q.q)
				if err != nil {
					b.Fatal(err)
				}
				if total == 0 || len(ps) == 0 {
					b.Fatalf("Find(%s) found nothing (total %d)", q.name, total)
				}
			}
		})
	}
	svc := procedures.NewService(s, procedures.Options{})
	b.Run("service_exposed25", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ps, total, err := svc.Find(context.Background(), procedures.FindRequest{Exposed: ptr(true)})
			if err != nil {
				b.Fatal(err)
			}
			if total == 0 || len(ps) != fields.DefaultFindLimit {
				b.Fatalf("service Find(exposed) found %d (total %d)", len(ps), total)
			}
		}
	})
}

// BenchSuggest fills s with SparseFill's n procedures, its two tools each
// called by a quarter of them and together by one (the reuse suggestion of
// a capture whose tools are each common, the case a tool-filtered Find
// used to walk every procedure for), and measures the service's Suggest
// for those tools and its tool-filtered Find, the planner's
// GET /v1/procedures?tool=…&tool=…. s must be empty.
func BenchSuggest(b *testing.B, s procedures.Store, n int) {
	start := time.Now()
	SparseFill(b, s, n, n/4)
	b.Logf("sparse fill of %d procedures: %v", n, time.Since(start).Round(time.Millisecond))
	svc := procedures.NewService(s, procedures.Options{})
	tools := []string{SparseA, SparseB}
	b.Run("suggest", func(b *testing.B) {
		b.ReportAllocs()
		medianLoop(b, func() {
			sg, err := svc.Suggest(context.Background(), tools, "")
			if err != nil || sg == nil || sg.Tool != SparseOnly {
				b.Fatalf("Suggest = %+v, %v; want %s", sg, err, SparseOnly)
			}
		})
	})
	b.Run("find_tools", func(b *testing.B) {
		b.ReportAllocs()
		medianLoop(b, func() {
			ps, total, err := svc.Find(context.Background(), procedures.FindRequest{Tools: tools})
			if err != nil || len(ps) != 1 || total != 1 {
				b.Fatalf("Find(tools) = %d, total %d, %v", len(ps), total, err)
			}
		})
	})
}

// medianLoop runs op b.N times and reports the median of one op as the
// metric p50-ms (a shared machine's other load moves the mean, not the
// median).
func medianLoop(b *testing.B, op func()) {
	durs := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		op()
		durs = append(durs, time.Since(start))
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
}
