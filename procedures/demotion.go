package procedures

import "fmt"

// DefaultDemoteAfter is the number of consecutive failures of a current
// version that demote its procedure when --demote-after is not set.
const DefaultDemoteAfter = 3

// MaxDemoteAfter bounds --demote-after.
const MaxDemoteAfter = 1000

// Demotion is what a run did to its procedure's demotion (UseResult).
type Demotion string

// The demotions.
const (
	// DemotionNone: the run changed nothing.
	DemotionNone Demotion = ""
	// DemotionDemoted: the run's failure demoted the procedure.
	DemotionDemoted Demotion = "demoted"
	// DemotionLifted: the run's success lifted the procedure's demotion.
	DemotionLifted Demotion = "lifted"
)

// DemotedAfter is docs/design.md's demotion rule, its one implementation
// (Neo4j's fragments/demotion.cypher applies it to the same inputs, and
// graph/neo4j's TestDemotionIsGos checks it against this on every case):
// whether a procedure is demoted after a run of one of its versions. Only
// a run of the current version changes it: a failure demotes once that
// version's consecutive failures (counting this one) reach after (0:
// never), a success lifts it.
func DemotedAfter(wasDemoted, current, failed bool, consecutive int64, after int) bool {
	switch {
	case !current:
		return wasDemoted
	case !failed:
		return false
	}
	return wasDemoted || (after > 0 && consecutive >= int64(after))
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

// DemoteParams is what a store that cannot run Go needs to apply
// DemotedAfter to the run of in (nil when in has no run): whether it
// failed, the setting, and where the version's health vector keeps its
// consecutive failures.
func DemoteParams(in UseInput) map[string]any {
	if in.Run == nil {
		return nil
	}
	return map[string]any{"failed": in.Run.Failure != "", "after": int64(in.DemoteAfter), "consecutive": int64(hvConsecutive)}
}
