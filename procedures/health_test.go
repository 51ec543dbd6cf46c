package procedures_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/procgraph/procgraph/health"
)

func TestHealthAdd(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var h health.Health
	for i, r := range []health.Run{
		{Duration: time.Millisecond, At: at},
		{Failure: health.FailureTimeout, Duration: 30 * time.Second, At: at.Add(time.Second)},
		{Failure: health.FailureToolError, Duration: 1500 * time.Microsecond, At: at.Add(2 * time.Second)},
		{Duration: time.Hour, At: at.Add(-time.Hour)}, // finished out of order
	} {
		h = h.Add(r)
		if i == 2 && (h.ConsecutiveFailures != 2 || h.LastFailureClass != health.FailureToolError) {
			t.Fatalf("after two failures: %+v", h)
		}
	}
	if h.Runs != 4 || h.Succeeded != 2 || h.Failed != 2 || h.ConsecutiveFailures != 0 {
		t.Fatalf("counts %+v", h)
	}
	if !h.LastSuccessAt.Equal(at) || !h.LastFailureAt.Equal(at.Add(2*time.Second)) {
		t.Fatalf("last success %v, last failure %v: a run that finished earlier never moves them back", h.LastSuccessAt, h.LastFailureAt)
	}
	want := map[string]int64{health.FailureTimeout: 1, health.FailureToolError: 1}
	if !reflect.DeepEqual(h.Failures, want) {
		t.Fatalf("failures %v, want %v", h.Failures, want)
	}
	// 1 ms (bucket ≤1), 1.5 ms (≤2), 30 s (≤30000), 1 h (above every bound).
	wantBuckets := make([]int64, len(health.HealthBounds)+1)
	wantBuckets[0], wantBuckets[1], wantBuckets[len(health.HealthBounds)-1], wantBuckets[len(health.HealthBounds)] = 1, 1, 1, 1
	if !reflect.DeepEqual(h.Buckets, wantBuckets) {
		t.Fatalf("buckets %v, want %v", h.Buckets, wantBuckets)
	}
	if p := h.Percentile(0.5); p == nil || *p != 2 {
		t.Fatalf("p50 = %v, want 2", p)
	}
	if p := h.Percentile(0.95); p == nil || *p != 30000 {
		t.Fatalf("p95 = %v, want 30000 (the last bound stands for longer runs)", p)
	}
	if r := h.SuccessRate(); r == nil || *r != 0.5 {
		t.Fatalf("success rate %v", r)
	}
	if got := health.HealthOf(h.Vector()); !reflect.DeepEqual(got, h) {
		t.Fatalf("HealthOf(Vector()) = %+v, want %+v", got, h)
	}
	if got := h.Add(health.Run{Failure: "no_such_class", At: at}); !reflect.DeepEqual(got, h) {
		t.Fatalf("a run of an unknown class changed the health: %+v", got)
	}
	if _, ok := (health.Run{Failure: "no_such_class"}).Delta(); ok {
		t.Fatal("Delta accepted an unknown class")
	}
}

func TestHealthJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    health.Health
		want string
	}{
		{"never run", health.Health{}, `{"runs":0,"succeeded":0,"failed":0,"failures":{},"success_rate":null,"p50_ms":null,"p95_ms":null,` +
			`"last_success_at":null,"last_failure_at":null,"last_failure_class":null,"consecutive_failures":0,"demotion_streak":0,"demotion_callers":0}`},
		{"one failure", health.Health{}.Add(health.Run{Failure: health.FailureStepLimit, Duration: 7 * time.Millisecond,
			At: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}),
			`{"runs":1,"succeeded":0,"failed":1,"failures":{"step_limit":1},"success_rate":0,"p50_ms":10,"p95_ms":10,` +
				`"last_success_at":null,"last_failure_at":"2026-12-02T10:00:00Z","last_failure_class":"step_limit","consecutive_failures":1,"demotion_streak":1,"demotion_callers":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.h)
			if err != nil || string(b) != tc.want {
				t.Fatalf("JSON = %s, %v\nwant %s", b, err, tc.want)
			}
		})
	}
}
