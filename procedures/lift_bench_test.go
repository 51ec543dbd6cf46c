package procedures

import (
	"fmt"
	"testing"
	"time"

	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/signature"
)

// benchLiftTools and benchLiftCode are storetest.LiftTools and LiftCode
// (which this package's tests cannot import).
var benchLiftTools = []Tool{
	{Name: "get_task_jobs_summary", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"task_id": map[string]any{"type": "integer"}}}},
	{Name: "get_scout_job_details", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"task_id": map[string]any{"type": "integer"}, "max_jobs": map[string]any{"type": "integer"}}}},
	{Name: "search_panda_docs", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"query": map[string]any{"type": "string"}}}},
}

func benchLiftCode(task int) string {
	return fmt.Sprintf("summary = await tools.get_task_jobs_summary(task_id=%d)\n"+
		"scouts = await tools.get_scout_job_details(task_id=%d, max_jobs=5)\n"+
		"docs = await tools.search_panda_docs(query=\"scout jobs failing with exit code 1305\")\n"+
		"return {\"summary\": summary, \"scouts\": scouts, \"docs\": docs}\n", task, task)
}

// BenchmarkLiftWork measures what Capture does with the code before the
// write, lifting on (AnalyzeLift, the rule, the lifted schema) against
// off (Analyze), interleaved (each iteration one of each, alternating
// which goes first): lifting's own CPU, without the store. same: the same
// code every time; else a new task id each time.
func BenchmarkLiftWork(b *testing.B) {
	cat, err := NewCatalogue(benchLiftTools)
	if err != nil {
		b.Fatal(err)
	}
	s := &Service{lifts: newLiftCache()}
	work := func(code string, lift bool) time.Duration {
		start := time.Now()
		var a *signature.Analysis
		var examples map[string]any
		var err error
		if lift {
			var plan *signature.LiftPlan
			if _, plan, err = signature.AnalyzeLift(code, signature.PythonAsync); err != nil {
				b.Fatal(err)
			}
			res := s.lift(plan, cat, nil)
			if len(res.Lifted) != 4 {
				b.Fatalf("lifted %v", res.Lifted)
			}
			a, examples = res.Analysis, res.Examples
		} else if a, err = signature.Analyze(code, signature.PythonAsync); err != nil {
			b.Fatal(err)
		}
		schema, err := schemas.InputSchema(a.Parameters, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(examples) > 0 {
			liftedSchema(schema, a, examples, cat)
		}
		return time.Since(start)
	}
	for _, same := range []bool{true, false} {
		b.Run(map[bool]string{true: "same", false: "varied"}[same], func(b *testing.B) {
			b.ReportAllocs()
			var lift, plain time.Duration
			i := 0
			for b.Loop() {
				task := 48213
				if !same {
					task += i
				}
				code := benchLiftCode(task)
				if i%2 == 0 {
					lift += work(code, true)
					plain += work(code, false)
				} else {
					plain += work(code, false)
					lift += work(code, true)
				}
				i++
			}
			b.ReportMetric(float64(lift.Nanoseconds())/float64(i), "lift-ns/op")
			b.ReportMetric(float64(plain.Nanoseconds())/float64(i), "nolift-ns/op")
			b.ReportMetric(float64((lift-plain).Nanoseconds())/float64(i), "added-ns/op")
		})
	}
}
