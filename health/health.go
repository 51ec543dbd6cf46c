package health

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// DefaultDemoteAfter is the number of consecutive failures of a current
// version that demote its procedure when --demote-after is not set.
const DefaultDemoteAfter = 3

// MaxDemoteAfter bounds --demote-after.
const MaxDemoteAfter = 1000

// Demotion is what a run did to its procedure's demotion (procedures.UseResult).
type Demotion string

// The demotions.
const (
	// DemotionNone: the run changed nothing.
	DemotionNone Demotion = ""
	// DemotionDemoted: the run's failure demoted the procedure.
	DemotionDemoted Demotion = "demoted"
	// DemotionLifted: the procedure's demotion was lifted (a verification,
	// an operator; procedures.Store.LiftDemotion).
	DemotionLifted Demotion = "lifted"
)

// DemotedAfter is docs/design.md's demotion rule, its one implementation
// (Neo4j's fragments/demotion.cypher applies it to the same inputs, and
// graph/neo4j's TestDemotionIsGos checks it against this on every case):
// whether a procedure is demoted after a run of one of its versions that
// failed under failure ("": succeeded), h that version's health with the
// run counted. Only a failure of the current version that counts toward
// demotion (CountsTowardDemotion) can demote: once the streak
// (Health.DemotionStreak) reaches after (0: never) and its failures came
// from two callers or more (SeveralCallers), since a caller can make any
// counted class happen by its arguments. No run lifts a demotion: a
// verification that passes under the current catalogue, a promote or an
// operator does (procedures.Service.LiftDemotion).
func DemotedAfter(wasDemoted, current bool, failure string, h Health, after int) bool {
	if wasDemoted || !current || !CountsTowardDemotion(failure) {
		return wasDemoted
	}
	return after > 0 && h.DemotionStreak >= int64(after) && SeveralCallers(h.StreakCallers[0], h.StreakCallers[1])
}

// DemotionOf is the Demotion of going from was to now.
func DemotionOf(was, now bool) Demotion {
	switch {
	case now && !was:
		return DemotionDemoted
	case was && !now:
		return DemotionLifted
	}
	return DemotionNone
}

// CheckDemoteAfter checks a --demote-after setting.
func CheckDemoteAfter(n int) error {
	if n < 0 || n > MaxDemoteAfter {
		return fmt.Errorf("demote-after must be 0 (never) to %d, not %d", MaxDemoteAfter, n)
	}
	return nil
}

// DemoteParamsOf is procedures.DemoteParams of a run that failed under
// failure ("": succeeded), with --demote-after set to after.
func DemoteParamsOf(failure string, after int) map[string]any {
	return map[string]any{"counted": CountsTowardDemotion(failure), "after": int64(after),
		"streak": int64(hvStreak), "hi": int64(hvCallersHi), "lo": int64(hvCallersLo), "span": CallerSpan}
}

// StreakReset is what lifting a demotion does to the current version's
// health vector (HealthDelta's rule): its demotion streak and caller
// slots start again from 0, the rest kept, so the next failure alone does
// not demote it again.
func StreakReset() HealthDelta {
	d := HealthDelta{Keep: make([]int64, HealthLen), Add: make([]int64, HealthLen), Floor: make([]int64, HealthLen)}
	for i := range d.Keep {
		d.Keep[i] = 1
	}
	d.Keep[hvStreak], d.Keep[hvCallersHi], d.Keep[hvCallersLo] = 0, 0, 0
	return d
}

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
	// DemotionStreak counts the runs since the last success that failed
	// under a class that counts toward demotion (CountsTowardDemotion): a
	// class that does not (an outage, a timeout) neither adds to it nor
	// ends it.
	DemotionStreak int64
	// StreakCallers is what the streak keeps of who ran it, to tell one
	// caller from several without reading anything (DemotedAfter): the
	// largest CallerHash of its failures' callers, and CallerSpan minus the
	// smallest; both 0 before its first failure.
	StreakCallers [2]int64
}

// CallerSpan bounds CallerHash: a hash is in [1, CallerSpan).
const CallerSpan int64 = 1 << 62

// CallerHash is the number a demotion streak keeps of the principal who
// ran a failure (Health.StreakCallers): a hash of its name, from 1 to
// CallerSpan-1, so 0 stays "none" and a sum of two stays below 2^63 (the
// stores' integers).
func CallerHash(caller string) int64 {
	sum := sha256.Sum256([]byte(caller))
	return int64(binary.BigEndian.Uint64(sum[:8])%uint64(CallerSpan-1)) + 1
}

// StreakCallerCount is how many distinct callers ran the demotion
// streak's failures: 0 (no streak), 1, or 2 meaning two or more.
func (h Health) StreakCallerCount() int {
	hi, lo := h.StreakCallers[0], h.StreakCallers[1]
	switch {
	case hi == 0 && lo == 0:
		return 0
	case SeveralCallers(hi, lo):
		return 2
	}
	return 1
}

// SeveralCallers reports whether a demotion streak whose caller slots
// hold hi (the largest CallerHash) and lo (CallerSpan minus the smallest)
// was run by two callers or more: the largest and smallest differ. Neo4j's
// fragments/demotion.cypher applies the same sum.
func SeveralCallers(hi, lo int64) bool { return hi != 0 && lo != 0 && hi+lo != CallerSpan }

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

// ResultSucceeded is the result of a run that succeeded (audit.Decision.Result).
const ResultSucceeded = "succeeded"

// RunResults are the results a run's decision records (audit.Decision.Result):
// succeeded, or the class the run failed under.
var RunResults = append([]string{ResultSucceeded, FailureInvalidArguments}, FailureClasses...)

// CountsTowardDemotion reports whether a run that failed under class
// advances its version's demotion streak (Health.DemotionStreak; docs/
// design.md "Health of each version"): the tool's own errors and refusals
// and the program's own failures do. An unreachable upstream and a
// timeout do not, and do not end the streak either: an outage or a slow
// server is not the procedure's fault. The console's health badges
// (ui/static/pages/health.js NEUTRAL) follow it, checked by ui's
// TestUncountedClasses.
func CountsTowardDemotion(class string) bool {
	return class != "" && CountsInHealth(class) && !slices.Contains(neutralClasses, class)
}

// neutralClasses are the failure classes that neither advance nor end a
// demotion streak (CountsTowardDemotion).
var neutralClasses = []string{FailureUpstreamUnavailable, FailureTimeout}

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
	// Caller is the principal the run was for (the token holder of the
	// invoke, the turn or the proc__ call; a nested run carries its outer
	// caller's): a demotion needs failures of two (Health.StreakCallers).
	// Only its CallerHash is kept.
	Caller string
}

// The layout of a health vector: the counts, then the failures by class,
// then the buckets, then the classes added later (laterClasses) and the
// demotion streak with its two caller slots. Times are Unix ms (0:
// never); the last failure's class is its index in FailureClasses plus
// one (0: none).
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

// laterClasses is how many of FailureClasses follow the buckets before
// the demotion slots; a class added after them follows those slots.
const laterClasses = 1

// Where a health vector keeps the demotion streak (Health.DemotionStreak)
// and its two caller slots (Health.StreakCallers), after the buckets and
// the later classes.
var (
	hvStreak    = hvBuckets + len(HealthBounds) + 1 + laterClasses
	hvCallersHi = hvStreak + 1
	hvCallersLo = hvStreak + 2
)

// HealthLen is the length of a health vector.
var HealthLen = hvFailures + len(FailureClasses) + len(HealthBounds) + 1 + 3

// classSlot is where a health vector counts the failures of
// FailureClasses[i].
func classSlot(i int) int {
	switch {
	case i < firstClasses:
		return hvFailures + i
	case i < firstClasses+laterClasses:
		return hvBuckets + len(HealthBounds) + 1 + i - firstClasses
	}
	return hvCallersLo + 1 + i - firstClasses - laterClasses
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
		d.Keep[hvStreak], d.Keep[hvCallersHi], d.Keep[hvCallersLo] = 0, 0, 0
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
		if CountsTowardDemotion(r.Failure) {
			// The slots keep the largest hash and the span minus the
			// smallest: max(old, x) is the formula with Keep 1, Add 0.
			h := CallerHash(r.Caller)
			d.Add[hvStreak] = 1
			d.Floor[hvCallersHi], d.Floor[hvCallersLo] = h, CallerSpan-h
		}
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
		Failures: map[string]int64{}, Buckets: make([]int64, len(HealthBounds)+1),
		DemotionStreak: at(hvStreak), StreakCallers: [2]int64{at(hvCallersHi), at(hvCallersLo)}}
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
	v[hvStreak], v[hvCallersHi], v[hvCallersLo] = h.DemotionStreak, h.StreakCallers[0], h.StreakCallers[1]
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
	DemotionStreak      int64            `json:"demotion_streak"`
	DemotionCallers     int              `json:"demotion_callers"`
}

// MarshalJSON writes h's view: success_rate, p50_ms and p95_ms derived,
// failures by class ({} before any), the demotion streak and how many
// callers ran it (0, 1, or 2 for two or more; its hashes not shown), the
// buckets not shown.
func (h Health) MarshalJSON() ([]byte, error) {
	v := healthView{Runs: h.Runs, Succeeded: h.Succeeded, Failed: h.Failed, Failures: h.Failures,
		SuccessRate: h.SuccessRate(), P50: h.Percentile(0.5), P95: h.Percentile(0.95),
		LastSuccessAt: h.LastSuccessAt, LastFailureAt: h.LastFailureAt, ConsecutiveFailures: h.ConsecutiveFailures,
		DemotionStreak: h.DemotionStreak, DemotionCallers: h.StreakCallerCount()}
	if v.Failures == nil {
		v.Failures = map[string]int64{}
	}
	if h.LastFailureClass != "" {
		v.LastFailureClass = &h.LastFailureClass
	}
	return json.Marshal(v)
}
