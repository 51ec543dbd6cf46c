package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// run is a use of name's version hash ("" the current one) under key that
// finished as failure says ("" succeeded) after d.
func run(name, hash, key, failure string, d time.Duration, at time.Time) procedures.UseInput {
	return procedures.UseInput{Name: name, CodeHash: hash, UsageKey: key, Replay: failure == "", At: at,
		Run: &health.Run{Failure: failure, Duration: d, At: at}}
}

// testHealth: every run of a version adds to its health in the store
// (docs/design.md "Health of each version"): successes and failures by
// class, durations, last success and failure, consecutive failures; a
// failed run counts nowhere else; runs count on the version they ran,
// exactly, under 16 concurrent runners.
func testHealth(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)

	t.Run("runs count on the version", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		if h := MustGet(t, s, name).Health; h.Runs != 0 || h.SuccessRate() != nil || h.Percentile(0.5) != nil {
			t.Fatalf("health before any run = %+v, want none", h)
		}
		MustRecordUse(t, s, run(name, "", "k2", "", 4*time.Millisecond, At(5)))
		before := MustGet(t, s, name)
		p := MustRecordUse(t, s, run(name, "", "k3", health.FailureToolError, 40*time.Millisecond, At(6))).Procedure
		if p.Frequency != before.Frequency || p.UseCount != before.UseCount || !reflect.DeepEqual(p.LastUsedAt, before.LastUsedAt) {
			t.Errorf("a failed run moved frequency %d→%d, use count %d→%d or last used %v→%v; it counts in the health only",
				before.Frequency, p.Frequency, before.UseCount, p.UseCount, before.LastUsedAt, p.LastUsedAt)
		}
		MustRecordUse(t, s, run(name, "", "k4", health.FailureTimeout, 3*time.Second, At(7)))
		want := health.Health{Runs: 3, Succeeded: 1, Failed: 2, ConsecutiveFailures: 2,
			Failures:         map[string]int64{health.FailureToolError: 1, health.FailureTimeout: 1},
			LastFailureClass: health.FailureTimeout}
		got := MustGet(t, s, name).Health
		requireHealth(t, "after a success and two failures", got, want, At(5), At(7))
		if p50, p95 := got.Percentile(0.5), got.Percentile(0.95); p50 == nil || *p50 != 50 || p95 == nil || *p95 != 5000 {
			t.Errorf("p50, p95 = %v, %v; want 50, 5000 (the bounds of the runs' buckets)", p50, p95)
		}
		vs, err := s.Versions(ctx, name)
		if err != nil || len(vs) != 1 {
			t.Fatalf("Versions = %v, %v", vs, err)
		}
		requireHealth(t, "the version's", vs[0].Health, want, At(5), At(7))
		MustRecordUse(t, s, run(name, "", "k4", "", time.Millisecond, At(8)))
		if h := MustGet(t, s, name).Health; h.ConsecutiveFailures != 0 || h.Runs != 4 || h.LastFailureClass != health.FailureTimeout {
			t.Errorf("after a success: %+v, want consecutive failures 0, 4 runs, the last failure's class kept", h)
		}
	})

	t.Run("a run counts on the version it ran", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		MustCapture(t, s, In(sigAB, "h2", "k1", At(1)))
		MustRecordUse(t, s, run(name, "h2", "k2", health.FailureStepLimit, time.Millisecond, At(2)))
		if h := MustGet(t, s, name).Health; h.Runs != 0 {
			t.Errorf("the current version (h1) has %d runs, want 0: the run was h2's", h.Runs)
		}
		v, err := s.Version(ctx, name, "h2")
		if err != nil {
			t.Fatal(err)
		}
		requireHealth(t, "h2", v.Health, health.Health{Runs: 1, Failed: 1, ConsecutiveFailures: 1,
			Failures: map[string]int64{health.FailureStepLimit: 1}, LastFailureClass: health.FailureStepLimit}, time.Time{}, At(2))
	})

	t.Run("bad runs are refused and change nothing", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		_, err := s.RecordUse(ctx, run(name, "", "k2", "no_such_class", time.Millisecond, At(1)))
		RequireCode(t, err, fault.CodeInvalid)
		in := run(name, "", "k2", health.FailureInternal, time.Millisecond, At(1))
		in.Replay = true
		_, err = s.RecordUse(ctx, in)
		RequireCode(t, err, fault.CodeInvalid)
		_, err = s.RecordUse(ctx, run("proc__missing", "", "k2", health.FailureInternal, time.Millisecond, At(1)))
		RequireCode(t, err, fault.CodeNotFound)
		_, err = s.RecordUse(ctx, run(name, "nope", "k2", health.FailureInternal, time.Millisecond, At(1)))
		RequireCode(t, err, fault.CodeNotFound)
		if p := MustGet(t, s, name); p.Health.Runs != 0 || p.Frequency != 1 {
			t.Errorf("refused runs changed the procedure: %d runs, frequency %d", p.Health.Runs, p.Frequency)
		}
	})

	t.Run("16 concurrent runners count exactly", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		const runners, each = 16, 6
		var wg sync.WaitGroup
		errs := make(chan error, runners*each)
		for r := range runners {
			wg.Go(func() {
				for i := range each {
					failure := ""
					if i%3 == 2 {
						failure = health.FailureToolRefused
					}
					if _, err := s.RecordUse(ctx, run(name, "", fmt.Sprintf("r%d-%d", r, i), failure, time.Duration(i+1)*time.Millisecond, At(10+i))); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("RecordUse: %v", err)
		}
		h := MustGet(t, s, name).Health
		const failed = runners * (each / 3)
		if h.Runs != runners*each || h.Failed != failed || h.Succeeded != runners*each-failed || h.Failures[health.FailureToolRefused] != failed {
			t.Errorf("health = %+v, want %d runs, %d failed (tool_refused)", h, runners*each, failed)
		}
		var inBuckets int64
		for _, n := range h.Buckets {
			inBuckets += n
		}
		if inBuckets != runners*each {
			t.Errorf("the histogram holds %d runs, want %d", inBuckets, runners*each)
		}
		if p := MustGet(t, s, name); p.UseCount != runners*(each-each/3) {
			t.Errorf("use count = %d, want %d (the successful runs)", p.UseCount, runners*(each-each/3))
		}
	})
}

// requireHealth fails t unless got has want's counts, failures and last
// failure class, and the last success and failure at the times given (zero:
// none).
func requireHealth(t *testing.T, what string, got, want health.Health, lastSuccess, lastFailure time.Time) {
	t.Helper()
	if got.Runs != want.Runs || got.Succeeded != want.Succeeded || got.Failed != want.Failed ||
		got.ConsecutiveFailures != want.ConsecutiveFailures || got.LastFailureClass != want.LastFailureClass ||
		!reflect.DeepEqual(got.Failures, want.Failures) {
		t.Errorf("%s: health = %+v, want %+v", what, got, want)
	}
	for _, c := range []struct {
		name string
		got  *time.Time
		want time.Time
	}{{"last success", got.LastSuccessAt, lastSuccess}, {"last failure", got.LastFailureAt, lastFailure}} {
		switch {
		case c.want.IsZero() && c.got != nil:
			t.Errorf("%s: %s at %v, want none", what, c.name, c.got)
		case !c.want.IsZero() && c.got == nil:
			t.Errorf("%s: no %s, want one at %v", what, c.name, c.want)
		case !c.want.IsZero():
			RequireTime(t, what+": "+c.name, *c.got, c.want)
		}
	}
}
