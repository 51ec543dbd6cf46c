package health

import (
	"reflect"
	"testing"
	"time"
)

// TestHealthVectorLayoutKept: a class added after the first seven is kept
// after the buckets, so a vector stored before it reads as it did.
func TestHealthVectorLayoutKept(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_000).UTC()
	old := Health{}.Add(Run{Failure: FailureTimeout, Duration: 3 * time.Millisecond, At: at}).Vector()
	stored := old[:hvFailures+firstClasses+len(HealthBounds)+1] // the length a vector had before
	if got, want := HealthOf(stored), HealthOf(old); !reflect.DeepEqual(got, want) {
		t.Fatalf("a vector of the earlier length reads %+v, want %+v", got, want)
	}
	h := HealthOf(stored).Add(Run{Failure: FailureUpstreamUnavailable, Duration: time.Millisecond, At: at})
	if h.Failures[FailureUpstreamUnavailable] != 1 || h.Failures[FailureTimeout] != 1 || h.Buckets[0] != 1 || h.Buckets[2] != 1 {
		t.Fatalf("after an upstream_unavailable run: failures %v, buckets %v", h.Failures, h.Buckets)
	}
	if v := h.Vector(); len(v) != HealthLen || v[hvBuckets+len(HealthBounds)+1] != 1 {
		t.Fatalf("vector %v: the added class is not counted after the buckets", v)
	}
}
