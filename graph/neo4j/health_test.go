package neo4jstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/procedures"
)

// TestHealthAddIsGos: fragments/health_add.cypher, which use.cypher and
// use_health.cypher include, computes procedures.HealthDelta.Apply on
// runs of every kind: a success, a failure of each class, durations in
// the first, a middle and the last bucket, on no health, a short one and
// a full one.
func TestHealthAddIsGos(t *testing.T) {
	s := openStore(t)
	stmt := "WITH {health: $old} AS v RETURN\n" + cypher.Expand("#include health_add") + " AS health"
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	full := procedures.Health{Runs: 9, Succeeded: 4, Failed: 5, ConsecutiveFailures: 2, LastFailureClass: procedures.FailureTimeout,
		Failures: map[string]int64{procedures.FailureTimeout: 5}, Buckets: []int64{1, 2, 3}}
	later, earlier := at.Add(time.Hour), at.Add(-time.Hour)
	full.LastSuccessAt, full.LastFailureAt = &later, &earlier
	olds := map[string][]int64{"none": nil, "short": {3, 3}, "full": full.Vector()}
	runs := map[string]procedures.Run{
		"success, fast":   {Duration: 0, At: at},
		"success, middle": {Duration: 150 * time.Millisecond, At: at},
		"success, slow":   {Duration: time.Hour, At: at},
	}
	for _, class := range procedures.FailureClasses {
		runs[class] = procedures.Run{Failure: class, Duration: 3 * time.Millisecond, At: at}
	}
	for oldName, old := range olds {
		for runName, r := range runs {
			t.Run(oldName+"/"+runName, func(t *testing.T) {
				d, ok := r.Delta()
				if !ok {
					t.Fatalf("Delta(%+v) refused", r)
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
