package signature

import (
	"fmt"
	"testing"
)

// benchLiftCode is storetest.LiftCode: a block as an agent writes it,
// literals inline.
func benchLiftCode(task int) string {
	return fmt.Sprintf("summary = await tools.get_task_jobs_summary(task_id=%d)\n"+
		"scouts = await tools.get_scout_job_details(task_id=%d, max_jobs=5)\n"+
		"docs = await tools.search_panda_docs(query=\"scout jobs failing with exit code 1305\")\n"+
		"return {\"summary\": summary, \"scouts\": scouts, \"docs\": docs}\n", task, task)
}

// BenchmarkLift measures, on benchLiftCode, Analyze, AnalyzeLift (the
// analysis and the candidate walk) and Apply accepting every site (the
// rewrite and the lifted analysis) apart.
func BenchmarkLift(b *testing.B) {
	code := benchLiftCode(48213)
	b.Run("Analyze", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Analyze(code, PythonAsync); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AnalyzeLift", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, p, err := AnalyzeLift(code, PythonAsync); err != nil || len(p.Sites()) != 4 {
				b.Fatal(err)
			}
		}
	})
	b.Run("Apply", func(b *testing.B) {
		_, p, err := AnalyzeLift(code, PythonAsync)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if r := p.Apply(acceptAll, nil); len(r.Lifted) != 4 {
				b.Fatal(r.Warnings)
			}
		}
	})
}
