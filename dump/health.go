package dump

import (
	"fmt"
	"slices"
	"time"

	"github.com/procgraph/procgraph/health"
)

// HealthRecord is a version's health as a dump carries it (new in format
// 3; absent when the version never ran): the counts, the failures by
// class, the duration histogram's buckets (health.HealthBounds, then
// the runs above them) and the last success and failure.
type HealthRecord struct {
	Runs                int64            `json:"runs"`
	Succeeded           int64            `json:"succeeded"`
	Failed              int64            `json:"failed"`
	Failures            map[string]int64 `json:"failures"`
	DurationBuckets     []int64          `json:"duration_buckets"`
	LastSuccessAt       *time.Time       `json:"last_success_at"`
	LastFailureAt       *time.Time       `json:"last_failure_at"`
	LastFailureClass    string           `json:"last_failure_class"`
	ConsecutiveFailures int64            `json:"consecutive_failures"`
	// DemotionStreak and StreakCallers are the demotion streak and its two
	// caller slots (health.Health.DemotionStreak, StreakCallers),
	// optional: a dump written before they were kept reads as no streak.
	DemotionStreak int64   `json:"demotion_streak,omitempty"`
	StreakCallers  []int64 `json:"streak_callers,omitempty"`
}

// HealthRecordOf is h as a dump carries it, nil when the version never ran.
func HealthRecordOf(h health.Health) *HealthRecord {
	if h.Runs == 0 {
		return nil
	}
	r := &HealthRecord{Runs: h.Runs, Succeeded: h.Succeeded, Failed: h.Failed, Failures: h.Failures,
		DurationBuckets: h.Buckets, LastSuccessAt: h.LastSuccessAt, LastFailureAt: h.LastFailureAt,
		LastFailureClass: h.LastFailureClass, ConsecutiveFailures: h.ConsecutiveFailures, DemotionStreak: h.DemotionStreak}
	if h.StreakCallers != [2]int64{} {
		r.StreakCallers = h.StreakCallers[:]
	}
	return r
}

// Health is the health r holds (none for nil).
func (r *HealthRecord) Health() health.Health {
	if r == nil {
		return health.HealthOf(nil)
	}
	h := health.Health{Runs: r.Runs, Succeeded: r.Succeeded, Failed: r.Failed, Failures: r.Failures,
		Buckets: r.DurationBuckets, LastSuccessAt: r.LastSuccessAt, LastFailureAt: r.LastFailureAt,
		LastFailureClass: r.LastFailureClass, ConsecutiveFailures: r.ConsecutiveFailures, DemotionStreak: r.DemotionStreak}
	if len(r.StreakCallers) == 2 {
		h.StreakCallers = [2]int64{r.StreakCallers[0], r.StreakCallers[1]}
	}
	return h
}

// check returns why r cannot be a health that runs added up to, "" when it
// can: no negative count, runs the sum of successes and failures and of
// the buckets, failures by known class summing to the failed runs, a
// last failure's class exactly when there was a failure, a demotion
// streak within the consecutive failures whose caller slots are none
// exactly when it is 0, else two hashes' slots (health.CallerHash).
func (r *HealthRecord) check() string {
	if r.Runs < 1 || r.Succeeded < 0 || r.Failed < 0 || r.ConsecutiveFailures < 0 {
		return "a count is negative, or runs is 0 (a version that never ran has no health)"
	}
	if r.Succeeded+r.Failed != r.Runs {
		return fmt.Sprintf("succeeded %d + failed %d is not runs %d", r.Succeeded, r.Failed, r.Runs)
	}
	if r.ConsecutiveFailures > r.Failed {
		return fmt.Sprintf("consecutive failures %d are more than the failed runs %d", r.ConsecutiveFailures, r.Failed)
	}
	var failed int64
	for class, n := range r.Failures {
		if !slices.Contains(health.FailureClasses, class) || n < 1 {
			return fmt.Sprintf("failure class %q with %d runs (classes: %v, each at least 1)", class, n, health.FailureClasses)
		}
		failed += n
	}
	if failed != r.Failed {
		return fmt.Sprintf("failures by class sum to %d, not failed %d", failed, r.Failed)
	}
	if len(r.DurationBuckets) != len(health.HealthBounds)+1 {
		return fmt.Sprintf("%d duration buckets, want %d", len(r.DurationBuckets), len(health.HealthBounds)+1)
	}
	var inBuckets int64
	for _, n := range r.DurationBuckets {
		if n < 0 {
			return "a duration bucket is negative"
		}
		inBuckets += n
	}
	if inBuckets != r.Runs {
		return fmt.Sprintf("duration buckets sum to %d, not runs %d", inBuckets, r.Runs)
	}
	if why := r.checkStreak(); why != "" {
		return why
	}
	if (r.Failed > 0) != (r.LastFailureClass != "") || (r.Failed > 0) != (r.LastFailureAt != nil) {
		return "a last failure (class and time) must be given exactly when a run failed"
	}
	if (r.Succeeded > 0) != (r.LastSuccessAt != nil) {
		return "a last success time must be given exactly when a run succeeded"
	}
	if r.LastFailureClass != "" && r.Failures[r.LastFailureClass] == 0 {
		return fmt.Sprintf("the last failure's class %q counts no failure", r.LastFailureClass)
	}
	for _, t := range []*time.Time{r.LastSuccessAt, r.LastFailureAt} {
		if t != nil && t.UnixMilli() <= 0 {
			return "a last success or failure is at or before 1970"
		}
	}
	return ""
}

// checkStreak is check's part on the demotion streak.
func (r *HealthRecord) checkStreak() string {
	if r.DemotionStreak < 0 || r.DemotionStreak > r.ConsecutiveFailures {
		return fmt.Sprintf("demotion streak %d is not from 0 to the consecutive failures %d", r.DemotionStreak, r.ConsecutiveFailures)
	}
	switch {
	case r.DemotionStreak == 0 && len(r.StreakCallers) == 0:
		return ""
	case len(r.StreakCallers) != 2 || r.DemotionStreak == 0:
		return "streak_callers must hold two slots exactly when the demotion streak is above 0"
	}
	hi, lo := r.StreakCallers[0], r.StreakCallers[1]
	if hi < 1 || lo < 1 || hi >= health.CallerSpan || lo >= health.CallerSpan || hi+lo < health.CallerSpan {
		return "streak_callers are not the slots of caller hashes (each from 1 to 2^62-1, the largest hash at least the smallest)"
	}
	return ""
}

// MergeHealth is the health a merge keeps of a version both sides hold:
// the one of more runs (runs are counted without a key, so two histories
// cannot be matched: a merge undercounts rather than count a run twice,
// as it does use_count), the store's on a tie.
func MergeHealth(store, dumped health.Health) health.Health {
	if dumped.Runs > store.Runs {
		return dumped
	}
	return store
}
