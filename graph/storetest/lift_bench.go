package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/procgraph/procgraph/procedures"
)

// LiftTools are typed tools as the shared examples' catalogue has them
// (examples/catalogue.json): what lifting reads.
var LiftTools = []procedures.Tool{
	{Name: "get_task_jobs_summary", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"task_id": map[string]any{"type": "integer"}}}},
	{Name: "get_scout_job_details", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"task_id": map[string]any{"type": "integer"}, "max_jobs": map[string]any{"type": "integer"}}}},
	{Name: "search_panda_docs", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"query": map[string]any{"type": "string"}}}},
}

// LiftCode is a block as an agent writes it, literals inline; task varies
// the task id.
func LiftCode(task int) string {
	return fmt.Sprintf("summary = await tools.get_task_jobs_summary(task_id=%d)\n"+
		"scouts = await tools.get_scout_job_details(task_id=%d, max_jobs=5)\n"+
		"docs = await tools.search_panda_docs(query=\"scout jobs failing with exit code 1305\")\n"+
		"return {\"summary\": summary, \"scouts\": scouts, \"docs\": docs}\n", task, task)
}

// BenchCaptureLift measures Service.Capture over s with lifting on and with
// "lift": false, interleaved (each iteration one of each, alternating
// which goes first), reporting lift-ns/op, nolift-ns/op and their ratio.
// same: every capture sends the same code (an existing version both ways);
// else each iteration its own task id (one version lifted, a new version
// each time with "lift": false).
func BenchCaptureLift(b *testing.B, s procedures.Store, same bool) {
	ctx := context.Background()
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, LiftTools, "bench"); err != nil {
		b.Fatal(err)
	}
	var lift, plain time.Duration
	capture := func(i int, noLift bool) time.Duration {
		task := 48213
		if !same {
			task += i
		}
		start := time.Now()
		if _, err := svc.Capture(ctx, procedures.CaptureRequest{Code: LiftCode(task), Dialect: "python-async", SessionID: benchKey(), NoLift: noLift}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	capture(-1, false)
	capture(-1, true)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			lift += capture(i, false)
			plain += capture(i, true)
		} else {
			plain += capture(i, true)
			lift += capture(i, false)
		}
		i++
	}
	b.ReportMetric(float64(lift.Nanoseconds())/float64(i), "lift-ns/op")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(i), "nolift-ns/op")
	b.ReportMetric(float64(lift)/float64(plain), "lift/nolift")
}
