package procedures_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// corpusTemplates are the shared examples (examples/procedures, a copy of
// ../shared/examples) written the way agents write them: instance values
// inline, or bound at the top; %[1]d is a task id, %[2]q a symptom or a
// search, %[3]d a job count.
var corpusTemplates = []struct{ name, dialect, code string }{
	{"compare_logs", "starlark", "similar = tools.find_similar_successful_tasks(task_id=%[1]d)\nfailed = tools.get_failed_job_log_summary(task_id=%[1]d)\n" +
		"ids = [t[\"task_id\"] for t in similar.get(\"tasks\", [])][:3]\ncmp = tools.compare_failed_vs_successful_job_logs(failed_task_id=%[1]d, success_task_ids=ids)\n" +
		"return {\"similar\": similar, \"failed\": failed, \"comparison\": cmp}\n"},
	{"retry_after_check", "starlark", "summary = tools.get_task_jobs_summary(task_id=%[1]d)\nif summary.get(\"failed\", 0) > 0:\n    tools.retry_task(task_id=%[1]d)\nreturn summary\n"},
	{"scouts_and_inputs (bound)", "python-async", "task_id = %[1]d  # the task under investigation\nscouts, inputs = await asyncio.gather(\n" +
		"    tools.get_scout_job_details(task_id=task_id, max_jobs=%[3]d),\n    tools.get_task_input_datasets(task_id=task_id),\n)\nreturn {\"scouts\": scouts, \"inputs\": inputs}\n"},
	{"causes_for_symptom", "python-async", "past = await tools.query_past_causes_for_symptom(symptom=%[2]q)\nout = {\"past_causes\": past, \"procedures_per_cause\": {}}\n" +
		"for c in past.get(\"causes\", [])[:3]:\n    name = c.get(\"cause_name\")\n    if name:\n" +
		"        out[\"procedures_per_cause\"][name] = await tools.query_past_procedures_for_cause(cause_name=name)\nreturn out\n"},
	{"docs_for_dataset", "python-async", "docs = await tools.search_panda_docs(query=%[2]q)\nsummary = await tools.get_task_input_datasets(task_id=%[1]d)\nreturn {\"docs\": docs, \"inputs\": summary}\n"},
	// The task id is also in the result: not lifted (a literal reused
	// outside tool arguments), so each task stays its own version.
	{"summary_with_id", "starlark", "s = tools.get_task_jobs_summary(task_id=%[1]d)\nreturn {\"task\": %[1]d, \"summary\": s}\n"},
}

var (
	corpusSymptoms = []string{"exit code 1305 on scout jobs", "stage-in failed: replica not found", "jobs stuck in transferring",
		"pilot lost heartbeat", "athena crashed with SIGSEGV", "output merge failed", "payload exceeded walltime", "too many files in input dataset"}
	corpusDatasets = []string{"mc23_13p6TeV.601229.PhPy8EG_A14_ttbar_hdamp258p75_SingleLep.deriv.DAOD_PHYS.e8514_s4162_r14622_p5855",
		"data22_13p6TeV.00428855.physics_Main.merge.AOD.f1297_m2137", "mc20_13TeV.410470.PhPy8EG_A14_ttbar_hdamp258p75_nonallhad.recon.AOD.e6337_s3681_r13144",
		"data18_13TeV.00348885.physics_Main.deriv.DAOD_PHYS.r13286_p4910_p5631", "mc21_13p6TeV.801165.Py8EG_A14NNPDF23LO_jj_JZ0.simul.HITS.e8453_s3873"}
)

// TestLiftCorpus captures a corpus of 240 blocks built from the shared
// examples with varied task ids, symptoms, searches and dataset names, once
// with lifting and once with "lift": false, and reports how many
// procedures and versions each gives: lifting folds the captures that
// differ only in values into one version per template (docs/benchmarks.md).
func TestLiftCorpus(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "examples", "catalogue.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Tools []procedures.Tool `json:"tools"`
	}
	if err := json.Unmarshal(raw, &cat); err != nil {
		t.Fatal(err)
	}
	const n = 240
	count := func(noLift bool) (procs, versions, lifted int) {
		st, err := embedded.Open(filepath.Join(t.TempDir(), "corpus.db"), embedded.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := context.Background()
		svc := procedures.NewService(st, procedures.Options{})
		if _, err := svc.PutCatalogue(ctx, cat.Tools, "tester"); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			tpl := corpusTemplates[i%len(corpusTemplates)]
			task := 40000 + (i*7919)%997
			text := corpusSymptoms[i%len(corpusSymptoms)]
			if tpl.name == "docs_for_dataset" {
				text = "replicas of " + corpusDatasets[i%len(corpusDatasets)] + " unavailable"
			}
			code := fmt.Sprintf(tpl.code, task, text, 5+5*(i%2))
			out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: code, Dialect: tpl.dialect, SessionID: fmt.Sprintf("agent-%d", i), NoLift: noLift})
			if err != nil {
				t.Fatalf("%s: %v\n%s", tpl.name, err, code)
			}
			if len(out.Lifted) > 0 {
				lifted++
			}
		}
		page, total, err := svc.Find(ctx, procedures.FindRequest{Limit: procedures.MaxFindLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			vs, err := svc.Versions(ctx, p.Name)
			if err != nil {
				t.Fatal(err)
			}
			versions += len(vs)
		}
		return total, versions, lifted
	}
	onP, onV, onL := count(false)
	offP, offV, _ := count(true)
	t.Logf("%d captures from %d templates: lifting on: %d procedures, %d versions (%d captures lifted something); lift false: %d procedures, %d versions",
		n, len(corpusTemplates), onP, onV, onL, offP, offV)
	if onP != offP {
		t.Fatalf("lifting changed the procedures: %d vs %d", onP, offP)
	}
	// Five templates fold to one version each; the one whose id is reused
	// in its result keeps one version per task id.
	perTask := map[int]bool{}
	for i := range n {
		if i%len(corpusTemplates) == len(corpusTemplates)-1 {
			perTask[40000+(i*7919)%997] = true
		}
	}
	if want := len(corpusTemplates) - 1 + len(perTask); onV != want {
		t.Fatalf("lifting on: %d versions, want %d", onV, want)
	}
	if offV <= onV*3 {
		t.Fatalf("lift false: %d versions, lifting on %d: nothing folded", offV, onV)
	}
}
