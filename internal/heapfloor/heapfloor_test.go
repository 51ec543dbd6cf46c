package heapfloor

import (
	"runtime"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		live, floor uint64
		want        int
	}{
		{"a live heap past the floor keeps the default", 200 << 20, 64 << 20, 100},
		{"a live heap at the floor keeps the default", 64 << 20, 64 << 20, 100},
		{"a small live heap gets the floor as headroom", 16 << 20, 64 << 20, 400},
		{"a headroom not a multiple rounds up", 48 << 20, 64 << 20, 134},
		{"a live heap under the runtime's minimum counts as it", 1 << 20, 64 << 20, 1600},
		{"no live heap yet counts as the minimum", 0, 64 << 20, 1600},
		{"a floor under the minimum changes nothing", 0, 1 << 20, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percent(tc.live, tc.floor); got != tc.want {
				t.Errorf("Percent(%d, %d) = %d, want %d", tc.live, tc.floor, got, tc.want)
			}
		})
	}
}

// waitPercent collects until the GC percent in effect satisfies ok, and
// fails after a while.
func waitPercent(t *testing.T, what string, ok func(int) bool) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		p := int(read(percentMetric))
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d: want %s", p, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKeepFollowsTheLiveHeap: a floor raises the percent of a small heap,
// the percent falls back to 100 when the live heap outgrows the floor and
// rises again when it shrinks (each collection adjusts it), and the last
// release restores what was there.
func TestKeepFollowsTheLiveHeap(t *testing.T) {
	before := int(read(percentMetric))
	release := Keep(32 << 20)
	defer release()
	waitPercent(t, "above 100 for a small heap", func(p int) bool { return p > 100 })

	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	waitPercent(t, "100 with 64 MiB live", func(p int) bool { return p == 100 })
	runtime.KeepAlive(big)
	big = nil
	waitPercent(t, "above 100 once the heap shrank", func(p int) bool { return p > 100 })

	release()
	if p := int(read(percentMetric)); p != before {
		t.Fatalf("GC percent %d after the release, want %d", p, before)
	}
	release() // a second release does nothing
	if p := int(read(percentMetric)); p != before {
		t.Fatalf("GC percent %d after a second release, want %d", p, before)
	}
}

// TestKeepLargestFloor: two holders, the larger floor in effect until its
// holder releases.
func TestKeepLargestFloor(t *testing.T) {
	small, large := Keep(8<<20), Keep(64<<20)
	defer small()
	defer large()
	hi := waitPercent(t, "set by the 64 MiB floor", func(p int) bool { return p >= Percent(read(liveMetric), 64<<20)-5 && p > 200 })
	large()
	waitPercent(t, "set by the 8 MiB floor", func(p int) bool { return p < hi && p == Percent(read(liveMetric), 8<<20) })
}

func TestKeepZeroHoldsNothing(t *testing.T) {
	before := int(read(percentMetric))
	release := Keep(0)
	runtime.GC()
	if p := int(read(percentMetric)); p != before {
		t.Fatalf("GC percent %d with Keep(0), want %d", p, before)
	}
	release()
}
