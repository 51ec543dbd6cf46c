package embedded

import (
	"fmt"
	"path/filepath"
	"testing"

	st "github.com/procgraph/procgraph/graph/storetest"
)

func benchStore(b *testing.B, opts Options) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "p.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkCapture measures captures with fsync on every commit (the
// default), sequential and from 16 goroutines, and without fsync.
func BenchmarkCapture(b *testing.B) {
	b.Run("sequential", func(b *testing.B) { st.BenchCapture(b, benchStore(b, Options{})) })
	b.Run("parallel16", func(b *testing.B) { st.BenchCaptureParallel(b, benchStore(b, Options{}), 16) })
	b.Run("sequential_nosync", func(b *testing.B) { st.BenchCapture(b, benchStore(b, Options{NoSync: true})) })
	b.Run("parallel16_nosync", func(b *testing.B) { st.BenchCaptureParallel(b, benchStore(b, Options{NoSync: true}), 16) })
}

// BenchmarkFind measures pages of 25 over 1k, 10k and 100k procedures, one
// store grown between sizes.
func BenchmarkFind(b *testing.B) {
	s := benchStore(b, Options{NoSync: true})
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { st.BenchFind(b, s, n) })
	}
}

// BenchmarkSuggest measures the reuse suggestion and a tool-filtered Find
// over 1k and 100k procedures whose filtered tools are each common and
// rarely together (storetest.BenchSuggest), a store per size.
func BenchmarkSuggest(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { st.BenchSuggest(b, benchStore(b, Options{NoSync: true}), n) })
	}
}

// BenchmarkGrantsList measures the service's list of grants (10 granted)
// over 10k and 100k procedures, one store grown between sizes.
func BenchmarkGrantsList(b *testing.B) {
	s := benchStore(b, Options{NoSync: true})
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { st.BenchGrantsList(b, s, n) })
	}
}

// BenchmarkApprovalRoundTrip measures the store's part of an approval
// (create, resolve, claim, finish), with fsync (the default) and without.
func BenchmarkApprovalRoundTrip(b *testing.B) {
	b.Run("sync", func(b *testing.B) { st.BenchApprovalRoundTrip(b, benchStore(b, Options{})) })
	b.Run("nosync", func(b *testing.B) { st.BenchApprovalRoundTrip(b, benchStore(b, Options{NoSync: true})) })
}

// BenchmarkCaptureLift measures a capture through the service with lifting
// on against "lift": false, interleaved (storetest.BenchCaptureLift).
func BenchmarkCaptureLift(b *testing.B) {
	b.Run("same", func(b *testing.B) { st.BenchCaptureLift(b, benchStore(b, Options{NoSync: true}), true) })
	b.Run("varied", func(b *testing.B) { st.BenchCaptureLift(b, benchStore(b, Options{NoSync: true}), false) })
}

// BenchmarkRecordRun measures what health and demotion add to a replay's
// write: its use with the run against the same use without one,
// interleaved (storetest.BenchRecordRun), with and without fsync.
func BenchmarkRecordRun(b *testing.B) {
	b.Run("sync", func(b *testing.B) { st.BenchRecordRun(b, benchStore(b, Options{})) })
	b.Run("nosync", func(b *testing.B) { st.BenchRecordRun(b, benchStore(b, Options{NoSync: true})) })
}
