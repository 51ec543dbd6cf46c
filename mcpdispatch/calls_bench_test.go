package mcpdispatch

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkCallBesideSlowCall is the time of a call of a server (greet),
// alone and while another call of the same server is in flight and slow
// (a sleep that ends only when cancelled), over both transports: with no
// head-of-line blocking the two are the same.
func BenchmarkCallBesideSlowCall(b *testing.B) {
	for _, tr := range transports {
		for _, slow := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/slow_in_flight=%v", tr, slow), func(b *testing.B) {
				u := newUpstream(b, tr)
				d := u.dispatcher(b, Options{MaxConcurrency: 4})
				ctx, cancel := context.WithCancel(context.Background())
				ended := make(chan error, 1)
				if slow {
					go func() {
						_, err := d.Dispatch(ctx, "sleep", map[string]any{"ms": 3600000})
						ended <- err
					}()
					for !contains(u.rec.Tools(), "sleep") {
						time.Sleep(time.Millisecond) // until the slow call reached the server
					}
				}
				args := map[string]any{"name": "b"}
				for b.Loop() {
					if _, err := d.Dispatch(context.Background(), "greet", args); err != nil {
						b.Fatal(err)
					}
				}
				if slow {
					select {
					case err := <-ended:
						b.Fatalf("the slow call ended during the benchmark: %v", err)
					default:
					}
				}
				cancel()
				if slow {
					<-ended
					for !contains(u.rec.Tools(), "sleep:cancelled") {
						time.Sleep(time.Millisecond) // until the server saw it cancelled
					}
				}
			})
		}
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
