package neo4j

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// TestHealthAddIsGos: fragments/health_add.cypher, which use.cypher and
// use_health.cypher include, computes health.HealthDelta.Apply on
// runs of every kind: a success, a failure of each class, durations in
// the first, a middle and the last bucket, and a lifted demotion's
// StreakReset, on no health, a short one and a full one (with a streak).
func TestHealthAddIsGos(t *testing.T) {
	s := openStore(t)
	stmt := "WITH {health: $old} AS v RETURN\n" + cypher.Expand("#include health_add") + " AS health"
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	full := health.Health{Runs: 9, Succeeded: 4, Failed: 5, ConsecutiveFailures: 2, LastFailureClass: health.FailureTimeout,
		Failures: map[string]int64{health.FailureTimeout: 5}, Buckets: []int64{1, 2, 3}}
	later, earlier := at.Add(time.Hour), at.Add(-time.Hour)
	full.LastSuccessAt, full.LastFailureAt = &later, &earlier
	olds := map[string][]int64{"none": nil, "short": {3, 3}, "full": full.Vector()}
	runs := map[string]health.Run{
		"success, fast":   {Duration: 0, At: at},
		"success, middle": {Duration: 150 * time.Millisecond, At: at},
		"success, slow":   {Duration: time.Hour, At: at},
		"reset":           {}, // a lifted demotion: health.StreakReset
	}
	for _, class := range health.FailureClasses {
		runs[class] = health.Run{Failure: class, Duration: 3 * time.Millisecond, At: at, Caller: "agent"}
	}
	full.DemotionStreak, full.StreakCallers = 2, [2]int64{health.CallerHash("a"), health.CallerSpan - health.CallerHash("a")}
	olds["full"] = full.Vector()
	for oldName, old := range olds {
		for runName, r := range runs {
			t.Run(oldName+"/"+runName, func(t *testing.T) {
				d, ok := r.Delta()
				if !ok {
					t.Fatalf("Delta(%+v) refused", r)
				}
				if runName == "reset" {
					d = health.StreakReset()
				}
				var oldParam any
				if old != nil {
					oldParam = old
				}
				recs := run(t, s, stmt, map[string]any{"old": oldParam,
					"health": map[string]any{"keep": d.Keep, "add": d.Add, "floor": d.Floor}})
				raw, _ := recs[0].Values[0].([]any)
				got := make([]int64, len(raw))
				for i, x := range raw {
					got[i], _ = x.(int64)
				}
				if want := d.Apply(old); !reflect.DeepEqual(got, want) {
					t.Fatalf("health_add.cypher = %v, HealthDelta.Apply = %v", got, want)
				}
			})
		}
	}
}

// TestDemotionIsGos: fragments/demotion.cypher, which use.cypher and
// use_health.cypher include, decides as health.DemotedAfter on every
// case: demoted before or not (or never set), a run of the current
// version or another, a success, a failure that counts toward demotion
// and one that does not, a streak below, at and above the setting, run by
// no caller, one or two (and a vector stored before the streak was
// kept), the setting 0 and 3, and no run at all.
func TestDemotionIsGos(t *testing.T) {
	s := openStore(t)
	stmt := "CREATE (p:DemotionCase {code_hash: 'cur', demoted: $was})\n" +
		"WITH p, {code_hash: $hash, health: $health} AS v\n" + cypher.Expand("#include demotion") +
		"\nWITH p, wasDemoted, p.demoted AS now DELETE p RETURN wasDemoted, now"
	one, other := health.CallerHash("agent"), health.CallerHash("other")
	callers := map[string][2]int64{"none": {}, "one": {one, health.CallerSpan - one},
		"two": {max(one, other), health.CallerSpan - min(one, other)}}
	for _, was := range []any{nil, false, true} {
		for _, current := range []bool{true, false} {
			for _, failure := range []string{"", health.FailureToolError, health.FailureUpstreamUnavailable} {
				for _, streak := range []int64{2, 3, 5} {
					for cname, slots := range callers {
						for _, after := range []int{0, 3} {
							name := fmt.Sprintf("was=%v/current=%v/failure=%q/streak=%d/callers=%s/after=%d", was, current, failure, streak, cname, after)
							t.Run(name, func(t *testing.T) {
								in := procedures.UseInput{DemoteAfter: after, Run: &health.Run{Failure: failure}}
								h := health.Health{DemotionStreak: streak, StreakCallers: slots}
								hash := "cur"
								if !current {
									hash = "other"
								}
								vec := h.Vector()
								if cname == "none" {
									vec = vec[:health.HealthLen-3] // stored before the streak was kept
								}
								recs := run(t, s, stmt, map[string]any{"was": was, "hash": hash, "health": vec,
									"demote": procedures.DemoteParams(in)})
								wasDemoted := was == true
								want := health.DemotedAfter(wasDemoted, current, failure, health.HealthOf(vec), after)
								if got := recs[0].Values[1]; got != want || recs[0].Values[0] != wasDemoted {
									t.Fatalf("demotion.cypher: was %v, now %v; DemotedAfter = %v", recs[0].Values[0], got, want)
								}
							})
						}
					}
				}
			}
		}
	}
	t.Run("no run", func(t *testing.T) {
		recs := run(t, s, stmt, map[string]any{"was": true, "hash": "cur", "health": nil, "demote": nil})
		if recs[0].Values[1] != true {
			t.Fatalf("no run: now %v, want it unchanged (true)", recs[0].Values[1])
		}
	})
}
