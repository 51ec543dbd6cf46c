// Package heapfloor keeps the Go heap's headroom, what a process may
// allocate between two collections, at least a floor. The runtime's
// default (GOGC=100) collects once the heap has grown by its live size:
// a server whose live heap is a few megabytes and whose requests each
// allocate hundreds of kilobytes then collects every few requests, and on
// two cores a collection's mark workers take a request's CPU. With a
// floor the next collection comes after max(live, floor) bytes: a small
// heap is collected once per floor, a heap larger than the floor as the
// runtime's default would.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The runtime/metrics samples read: the heap the last collection found
// live, and the GC percent in effect.
const (
	liveMetric    = "/gc/heap/live:bytes"
	percentMetric = "/gc/gogc:percent"
)

// heapMinimum is the runtime's smallest heap goal at GOGC=100; it scales
// with the percent, so a live heap under it counts as this much.
const heapMinimum = 4 << 20

// Percent is the GC percent that gives a heap of live bytes a headroom of
// max(live, floor): 100, the runtime's default, when live ≥ floor.
func Percent(live, floor uint64) int {
	live = max(live, heapMinimum)
	if floor <= live {
		return 100
	}
	return int((floor*100 + live - 1) / live)
}

// keeper is the process's one floor: the GC percent is process wide, so
// every holder shares it and the largest floor held is in effect.
var keeper struct {
	sync.Mutex
	floors  map[*uint64]struct{}
	armed   bool // a cleanup waits for the next collection
	restore int  // the GC percent before the first holder
}

// Keep holds a floor of floor bytes until release is called: after each
// collection the GC percent is set from the live heap (Percent), and when
// the last holder releases, the percent it found is restored. Keep(0)
// holds nothing. Whether an operator's GOGC should win is the caller's
// to decide: Keep sets the percent whatever it was.
func Keep(floor uint64) (release func()) {
	if floor == 0 {
		return func() {}
	}
	keeper.Lock()
	defer keeper.Unlock()
	if len(keeper.floors) == 0 {
		keeper.floors = map[*uint64]struct{}{}
		keeper.restore = int(read(percentMetric))
	}
	h := &floor
	keeper.floors[h] = struct{}{}
	adjustLocked()
	if !keeper.armed {
		arm()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			keeper.Lock()
			defer keeper.Unlock()
			delete(keeper.floors, h)
			if len(keeper.floors) == 0 {
				debug.SetGCPercent(keeper.restore)
				return
			}
			adjustLocked()
		})
	}
}

// sentinel is an object only a collection frees; its pointer field keeps
// it out of the tiny allocator, whose blocks are freed late.
type sentinel struct{ _ *byte }

// arm has the next collection adjust the percent and arm again while a
// floor is held.
func arm() {
	keeper.armed = true
	runtime.AddCleanup(new(sentinel), func(struct{}) {
		keeper.Lock()
		defer keeper.Unlock()
		keeper.armed = false
		if len(keeper.floors) == 0 {
			return
		}
		adjustLocked()
		arm()
	}, struct{}{})
}

// adjustLocked sets the GC percent from the live heap and the largest
// floor held.
func adjustLocked() {
	var floor uint64
	for h := range keeper.floors {
		floor = max(floor, *h)
	}
	if p := Percent(read(liveMetric), floor); p != int(read(percentMetric)) {
		debug.SetGCPercent(p)
	}
}

// read is one runtime/metrics sample (0 when the runtime has none).
func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
