package replay_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

func TestTools(t *testing.T) {
	ctx := context.Background()
	for _, allowMutating := range []bool{false, true} {
		e := newEnv(t, sandbox.NewInProcess(), allowMutating)
		ro := e.Capture(replaytest.ReadOnlyCode)
		sc := e.Capture(replaytest.StateChangingCode)
		e.Capture("return tools.get_jobs(task_id=task_id)")                                        // one tool: never exposed
		e.Capture("t = tools\nreturn [tools.get_jobs(), t.fetch_logs()]")                          // opaque: never exposed
		e.CaptureStatus("return [tools.get_jobs(), tools.restart_job()]", procedures.StatusFailed) // failed: never exposed
		if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: true, Actor: "op"}); err != nil {
			t.Fatal(err)
		}
		tools, err := e.Replayer.Tools(ctx, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range tools {
			names = append(names, d.Name)
		}
		want := []string{ro.Name}
		if allowMutating {
			want = []string{ro.Name, sc.Name}
			slices.Sort(want)
			slices.Sort(names)
		}
		if !slices.Equal(names, want) {
			t.Fatalf("allowMutating %v: exposed %v, want %v", allowMutating, names, want)
		}
		var d replay.ToolDescriptor
		for _, x := range tools {
			if x.Name == ro.Name {
				d = x
			}
		}
		if !d.ReadOnly || !d.ExternalAccess || !d.AutoRun || d.Frequency != 1 || !slices.Equal(d.Signature, []string{"fetch_logs", "get_jobs"}) ||
			d.InputSchema["required"] == nil || d.Description == "" {
			t.Fatalf("descriptor %+v", d)
		}
		b, _ := json.Marshal(d)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for _, k := range []string{"name", "description", "input_schema", "read_only", "external_access", "auto_run", "frequency", "signature"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("descriptor JSON lacks %q: %s", k, b)
			}
		}
	}
}

func TestToolsCauseFilterAndLimit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	a := e.Capture(replaytest.ReadOnlyCode)
	if _, err := e.Service.Capture(ctx, procedures.CaptureRequest{Code: "return [tools.get_jobs(), tools.fetch_logs(), tools.get_jobs()]",
		Cause: &procedures.CauseInput{Name: "disk full"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Capture(ctx, procedures.CaptureRequest{Code: replaytest.ReadOnlyCode, SessionID: "other"}); err != nil {
		t.Fatal(err)
	}
	all, err := e.Replayer.Tools(ctx, nil, 0)
	if err != nil || len(all) != 1 || all[0].Name != a.Name || all[0].Frequency != 3 {
		// One signature: one procedure, counted under three usage keys.
		t.Fatalf("Tools = %+v, %v", all, err)
	}
	if got, err := e.Replayer.Tools(ctx, []string{"disk full"}, 1); err != nil || len(got) != 1 {
		t.Fatalf("cause filter: %+v, %v", got, err)
	}
	if got, err := e.Replayer.Tools(ctx, []string{"nothing"}, 0); err != nil || len(got) != 0 {
		t.Fatalf("unknown cause: %+v, %v", got, err)
	}
	if _, err := e.Replayer.Tools(ctx, nil, -1); fault.ErrorCode(err) != fault.CodeInvalid {
		t.Fatalf("negative limit: %v", err)
	}
}
