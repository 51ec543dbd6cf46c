package sandbox_test

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// BenchmarkAdmission: the cost admission adds to a replay, one request at
// a time and with every slot contended.
func BenchmarkAdmission(b *testing.B) {
	ctx := context.Background()
	b.Run("uncontended", func(b *testing.B) {
		a := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 8, PerKey: 8})
		for b.Loop() {
			release, err := a.Acquire(ctx, "alice")
			if err != nil {
				b.Fatal(err)
			}
			release()
		}
	})
	b.Run("contended", func(b *testing.B) {
		a := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 2, Queue: 1 << 20})
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				release, err := a.Acquire(ctx, "k")
				if err != nil {
					b.Error(err)
					return
				}
				release()
			}
		})
	})
}
