package procedures

import (
	"encoding/json"
	"fmt"
	"time"
)

// Health is how a version's runs went (docs/design.md "Health of each
// version"): every run of it, by invoke, a proc__ call, a nested replay,
// adds to it in the same transaction as its use count. Its JSON is the
// API's view (success_rate and the percentiles derived, the histogram not
// shown); a store keeps its Vector.
type Health struct {
	Runs, Succeeded, Failed int64
	// Failures counts failed runs by class (FailureClasses).
	Failures map[string]int64
	// Buckets counts runs by duration: Buckets[i] the runs of at most
	// HealthBounds[i] ms (and above the bound before it), the last one
	// those above every bound.
	Buckets                      []int64
	LastSuccessAt, LastFailureAt *time.Time
	LastFailureClass             string
	ConsecutiveFailures          int64
}

// The failure classes of a run, in the order a health vector keeps them.
const (
	FailureToolError      = "tool_error"
	FailureToolRefused    = "tool_refused"
	FailureTimeout        = "timeout"
	FailureStepLimit      = "step_limit"
	FailureMemoryLimit    = "memory_limit"
	FailureResultTooLarge = "result_too_large"
	FailureInternal       = "internal"
	// FailureUpstreamUnavailable: a tool call could not reach its upstream
	// server, or lost it before an answer.
	FailureUpstreamUnavailable = "upstream_unavailable"
)

// FailureClasses are the classes a failed run is counted under in its
// version's health.
var FailureClasses = []string{FailureToolError, FailureToolRefused, FailureTimeout, FailureStepLimit,
	FailureMemoryLimit, FailureResultTooLarge, FailureInternal, FailureUpstreamUnavailable}

// firstClasses is how many of FailureClasses a health vector keeps before
// its buckets; the classes added later follow the buckets, so a vector
// stored before them reads the same (its missing elements are zeros).
const firstClasses = 7

// FailureInvalidArguments is the class of a run that failed because a tool
// call's arguments broke the tool's input_schema, refused before the call
// (docs/design.md "Health of each version"). Its caller chose them, so it
// is not the procedure's failure: it is not counted in the health and
// demotes nothing (CountsInHealth), and is not one of FailureClasses.
const FailureInvalidArguments = "invalid_arguments"

// ResultSucceeded is the result of a run that succeeded (Decision.Result).
const ResultSucceeded = "succeeded"

// RunResults are the results a run's decision records (Decision.Result):
// succeeded, or the class the run failed under.
var RunResults = append([]string{ResultSucceeded, FailureInvalidArguments}, FailureClasses...)

// CountsInHealth reports whether a run that failed under class (""
// succeeded) counts in its version's health and demotion: every class but
// FailureInvalidArguments, which its caller chose.
func CountsInHealth(class string) bool { return class != FailureInvalidArguments }

// ResultOf is the result a run that failed under class ("": succeeded)
// records on its decision.
func ResultOf(class string) string {
	if class == "" {
		return ResultSucceeded
	}
	return class
}

// HealthBounds are the upper bounds, in ms, of the duration histogram's
// buckets; one more bucket holds the runs above the last.
var HealthBounds = []int64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000}

// Run is one finished run of a stored version: Failure is its class
// (FailureClasses), "" when it succeeded.
type Run struct {
	Failure  string
	Duration time.Duration
	At       time.Time
}

// The layout of a health vector: the counts, then the failures by class,
// then the buckets. Times are Unix ms (0: never); the last failure's class
// is its index in FailureClasses plus one (0: none).
const (
	hvRuns = iota
	hvSucceeded
	hvFailed
	hvConsecutive
	hvLastSuccess
	hvLastFailure
	hvLastClass
	hvFailures // the first of firstClasses, then the buckets, then the later classes
)

// hvBuckets is where a health vector's buckets start.
const hvBuckets = hvFailures + firstClasses

// HealthLen is the length of a health vector.
var HealthLen = hvFailures + len(FailureClasses) + len(HealthBounds) + 1

// classSlot is where a health vector counts the failures of
// FailureClasses[i].
func classSlot(i int) int {
	if i < firstClasses {
		return hvFailures + i
	}
	return hvBuckets + len(HealthBounds) + 1 + i - firstClasses
}

// HealthDelta is what one run does to a health vector, element by element:
// new[i] = max(old[i]*Keep[i] + Add[i], Floor[i]), an element missing from
// old read as 0. It is the one rule of Health.Add; a store that cannot run
// Go (Neo4j's fragments/health_add.cypher) applies the same formula.
type HealthDelta struct {
	Keep, Add, Floor []int64
}

// Delta returns what r does to a health vector. It reports false when r's
// failure class is not one of FailureClasses.
func (r Run) Delta() (HealthDelta, bool) {
	d := HealthDelta{Keep: make([]int64, HealthLen), Add: make([]int64, HealthLen), Floor: make([]int64, HealthLen)}
	for i := range d.Keep {
		d.Keep[i] = 1
	}
	at := r.At.UnixMilli()
	d.Add[hvRuns] = 1
	if r.Failure == "" {
		d.Add[hvSucceeded] = 1
		d.Keep[hvConsecutive] = 0
		d.Floor[hvLastSuccess] = at
	} else {
		class := failureIndex(r.Failure)
		if class < 0 {
			return HealthDelta{}, false
		}
		d.Add[hvFailed] = 1
		d.Add[hvConsecutive] = 1
		d.Floor[hvLastFailure] = at
		d.Keep[hvLastClass], d.Add[hvLastClass] = 0, int64(class)+1
		d.Add[classSlot(class)] = 1
	}
	d.Add[hvBuckets+bucketOf(r.Duration)] = 1
	return d, true
}

// Apply returns v with d applied.
func (d HealthDelta) Apply(v []int64) []int64 {
	out := make([]int64, len(d.Add))
	for i := range out {
		var old int64
		if i < len(v) {
			old = v[i]
		}
		out[i] = max(old*d.Keep[i]+d.Add[i], d.Floor[i])
	}
	return out
}

func failureIndex(class string) int {
	for i, c := range FailureClasses {
		if c == class {
			return i
		}
	}
	return -1
}

func bucketOf(d time.Duration) int {
	ms := d.Milliseconds()
	if d%time.Millisecond != 0 {
		ms++ // a bound holds the runs of at most that many ms
	}
	for i, b := range HealthBounds {
		if ms <= b {
			return i
		}
	}
	return len(HealthBounds)
}

// HealthOf returns the health a vector holds (a nil or short vector reads
// as zeros; nil, a version that never ran, is the zero Health and
// allocates nothing: most procedures a page decodes never ran).
func HealthOf(v []int64) Health {
	if len(v) == 0 {
		return Health{}
	}
	at := func(i int) int64 {
		if i < len(v) {
			return v[i]
		}
		return 0
	}
	h := Health{Runs: at(hvRuns), Succeeded: at(hvSucceeded), Failed: at(hvFailed), ConsecutiveFailures: at(hvConsecutive),
		Failures: map[string]int64{}, Buckets: make([]int64, len(HealthBounds)+1)}
	for i, c := range FailureClasses {
		if n := at(classSlot(i)); n > 0 {
			h.Failures[c] = n
		}
	}
	for i := range h.Buckets {
		h.Buckets[i] = at(hvBuckets + i)
	}
	if ms := at(hvLastSuccess); ms > 0 {
		t := time.UnixMilli(ms).UTC()
		h.LastSuccessAt = &t
	}
	if ms := at(hvLastFailure); ms > 0 {
		t := time.UnixMilli(ms).UTC()
		h.LastFailureAt = &t
	}
	if c := at(hvLastClass); c > 0 && int(c) <= len(FailureClasses) {
		h.LastFailureClass = FailureClasses[c-1]
	}
	return h
}

// Vector returns h as a store keeps it (HealthOf's inverse).
func (h Health) Vector() []int64 {
	v := make([]int64, HealthLen)
	v[hvRuns], v[hvSucceeded], v[hvFailed], v[hvConsecutive] = h.Runs, h.Succeeded, h.Failed, h.ConsecutiveFailures
	if h.LastSuccessAt != nil {
		v[hvLastSuccess] = h.LastSuccessAt.UnixMilli()
	}
	if h.LastFailureAt != nil {
		v[hvLastFailure] = h.LastFailureAt.UnixMilli()
	}
	if i := failureIndex(h.LastFailureClass); i >= 0 {
		v[hvLastClass] = int64(i) + 1
	}
	for i, c := range FailureClasses {
		v[classSlot(i)] = h.Failures[c]
	}
	for i := 0; i < len(HealthBounds)+1 && i < len(h.Buckets); i++ {
		v[hvBuckets+i] = h.Buckets[i]
	}
	return v
}

// Add returns h with r counted (HealthDelta's rule); h unchanged when r's
// class is unknown.
func (h Health) Add(r Run) Health {
	d, ok := r.Delta()
	if !ok {
		return h
	}
	return HealthOf(d.Apply(h.Vector()))
}

// Note is how a planner's description of a procedure states h: "" before
// its first run, else its runs, how many succeeded and, while its last
// runs failed, how many and why the last one did.
func (h Health) Note() string {
	if h.Runs == 0 {
		return ""
	}
	s := fmt.Sprintf("Record: %d of %d runs succeeded.", h.Succeeded, h.Runs)
	if h.ConsecutiveFailures > 0 {
		s += fmt.Sprintf(" The last %d failed (the last: %s).", h.ConsecutiveFailures, h.LastFailureClass)
	}
	return s
}

// SuccessRate is Succeeded/Runs, nil before the first run.
func (h Health) SuccessRate() *float64 {
	if h.Runs == 0 {
		return nil
	}
	r := float64(h.Succeeded) / float64(h.Runs)
	return &r
}

// Percentile returns the upper bound, in ms, of the bucket that holds the
// q-quantile run (0 < q ≤ 1), nil before the first run; the last bound
// when that run took longer than every bound.
func (h Health) Percentile(q float64) *int64 {
	var total int64
	for _, n := range h.Buckets {
		total += n
	}
	if total == 0 {
		return nil
	}
	rank := int64(q*float64(total) + 0.999999999)
	var seen int64
	for i, n := range h.Buckets {
		seen += n
		if seen >= rank {
			b := HealthBounds[min(i, len(HealthBounds)-1)]
			return &b
		}
	}
	return nil
}

// healthView is Health's JSON (API.md "Learning").
type healthView struct {
	Runs                int64            `json:"runs"`
	Succeeded           int64            `json:"succeeded"`
	Failed              int64            `json:"failed"`
	Failures            map[string]int64 `json:"failures"`
	SuccessRate         *float64         `json:"success_rate"`
	P50                 *int64           `json:"p50_ms"`
	P95                 *int64           `json:"p95_ms"`
	LastSuccessAt       *time.Time       `json:"last_success_at"`
	LastFailureAt       *time.Time       `json:"last_failure_at"`
	LastFailureClass    *string          `json:"last_failure_class"`
	ConsecutiveFailures int64            `json:"consecutive_failures"`
}

// MarshalJSON writes h's view: success_rate, p50_ms and p95_ms derived,
// failures by class ({} before any), the buckets not shown.
func (h Health) MarshalJSON() ([]byte, error) {
	v := healthView{Runs: h.Runs, Succeeded: h.Succeeded, Failed: h.Failed, Failures: h.Failures,
		SuccessRate: h.SuccessRate(), P50: h.Percentile(0.5), P95: h.Percentile(0.95),
		LastSuccessAt: h.LastSuccessAt, LastFailureAt: h.LastFailureAt, ConsecutiveFailures: h.ConsecutiveFailures}
	if v.Failures == nil {
		v.Failures = map[string]int64{}
	}
	if h.LastFailureClass != "" {
		v.LastFailureClass = &h.LastFailureClass
	}
	return json.Marshal(v)
}
