package replay

import (
	"slices"
	"testing"
)

// TestAnalysisCacheHandsOutCopies: what a caller does to the analysis the
// cache gave it (on a miss or a hit) changes nothing another caller of the
// same code is given.
func TestAnalysisCacheHandsOutCopies(t *testing.T) {
	var c analysisCache
	code := "jobs = tools.get_jobs(task_id=task_id)\nreturn tools.fetch_logs(job=jobs, n=n)"
	for i := range 3 {
		b, err := c.analyse(code, "starlark")
		if err != nil {
			t.Fatal(err)
		}
		a := b.Analysis
		if !slices.Equal(a.Signature, []string{"fetch_logs", "get_jobs"}) || !slices.Equal(a.Parameters, []string{"n", "task_id"}) || len(a.Flows) == 0 {
			t.Fatalf("use %d: signature %v, parameters %v, flows %v", i, a.Signature, a.Parameters, a.Flows)
		}
		a.Signature[0], a.Parameters[0], a.Flows[0].Tool = "kill_job", "x", "kill_job"
		a.CodeHash = "changed"
	}
}
