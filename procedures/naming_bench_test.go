package procedures_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// BenchmarkCaptureNaming: a capture through the service on the embedded
// store (no fsync) of a plain signature (its Bamboo name, no look-up) and of
// signatures that are looked up under their possible names first (a long
// one whose tools are listed, and one with a "__" tool).
func BenchmarkCaptureNaming(b *testing.B) {
	for _, c := range []struct{ name, code string }{
		{"plain", "a = tools.get_task_input_datasets(task_id=task_id)\nreturn tools.search_panda_docs(query=str(a))"},
		{"long listed", "a = tools.compare_failed_vs_successful_job_logs(task_id=task_id)\nb = tools.find_similar_successful_tasks(task_id=task_id)\nreturn [a, b, tools.get_failed_job_log_summary(task_id=task_id)]"},
		{"hashed", "return tools.get_task_input_datasets__search_panda_docs(task_id=task_id)"},
	} {
		b.Run(c.name, func(b *testing.B) {
			st, err := embedded.Open(filepath.Join(b.TempDir(), "p.db"), embedded.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			svc := procedures.NewService(st, procedures.Options{})
			var tools []procedures.Tool
			for _, n := range []string{"get_task_input_datasets", "search_panda_docs", "compare_failed_vs_successful_job_logs",
				"find_similar_successful_tasks", "get_failed_job_log_summary"} {
				tools = append(tools, procedures.Tool{Name: n, ReadOnly: true})
			}
			if _, err := svc.PutCatalogue(context.Background(), tools, "bench"); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				if _, err := svc.Capture(context.Background(), procedures.CaptureRequest{Code: c.code, SessionID: fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
