package procedures_test

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// liftTools is a catalogue whose tools type their properties as agents'
// tools do.
var liftTools = []procedures.Tool{
	{Name: "get_task", ReadOnly: true, InputSchema: obj(map[string]any{
		"task_id": map[string]any{"type": "integer", "minimum": 1, "description": "PanDA task id"},
		"mode":    map[string]any{"type": "string", "enum": []any{"brief", "full"}},
		"verbose": map[string]any{"type": "boolean"},
		"note":    map[string]any{"description": "anything"},
		"fixed":   map[string]any{"type": "integer", "x-procgraph-lift": false},
		"flag":    map[string]any{"type": "boolean", "x-procgraph-lift": true},
		"short":   map[string]any{"type": "string", "maxLength": 3},
	})},
	{Name: "get_jobs", ReadOnly: true, InputSchema: obj(map[string]any{
		"task_id": map[string]any{"type": "integer"},
		"status":  map[string]any{"type": "string"},
		"ratio":   map[string]any{"type": "number"},
	})},
	{Name: "kill_job", InputSchema: obj(map[string]any{"panda_id": map[string]any{"type": "integer"}})},
}

// newLiftService returns a Service over a fresh embedded store holding
// liftTools.
func newLiftService(t *testing.T) *procedures.Service {
	t.Helper()
	return newLiftServiceOver(t, func(s procedures.Store) procedures.Store { return s })
}

// newLiftServiceOver is newLiftService over wrap of its store.
func newLiftServiceOver(t *testing.T, wrap func(procedures.Store) procedures.Store) *procedures.Service {
	t.Helper()
	store, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := procedures.NewService(wrap(store), procedures.Options{})
	if _, err := svc.PutCatalogue(context.Background(), liftTools, "tester"); err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestCaptureLifts(t *testing.T) {
	svc := newLiftService(t)
	out := mustCapture(t, svc, procedures.CaptureRequest{SessionID: "s1",
		Code: "s = tools.get_task(task_id=42, mode=\"full\", verbose=True, note=\"x\", fixed=7, flag=False, short=\"abcd\")\n" +
			"return tools.get_jobs(task_id=42, status=\"failed\", ratio=0.5)\n"})
	p := out.Procedure
	want := "s = tools.get_task(task_id=task_id, mode=\"full\", verbose=True, note=\"x\", fixed=7, flag=flag, short=\"abcd\")\n" +
		"return tools.get_jobs(task_id=task_id, status=status, ratio=ratio)\n"
	if p.Code != want {
		t.Fatalf("stored code\n%s\nwant\n%s", p.Code, want)
	}
	if !reflect.DeepEqual(p.Parameters, []string{"flag", "ratio", "status", "task_id"}) {
		t.Fatalf("parameters %v", p.Parameters)
	}
	var got []string
	for _, l := range out.Lifted {
		got = append(got, l.Parameter+"="+l.Tool+"."+l.Argument)
	}
	if strings.Join(got, " ") != "task_id=get_task.task_id flag=get_task.flag task_id=get_jobs.task_id status=get_jobs.status ratio=get_jobs.ratio" {
		t.Fatalf("lifted %v", got)
	}
	// The untyped property and the schema's refusal are told; the enum,
	// the boolean and the opted-out property are not.
	var msgs []string
	for _, w := range out.Warnings {
		msgs = append(msgs, w.Message)
	}
	if len(msgs) != 2 || !strings.Contains(msgs[0], "does not type tools.get_task's note") || !strings.Contains(msgs[1], "does not satisfy tools.get_task's short's schema") {
		t.Fatalf("warnings %q", msgs)
	}
	props := p.InputSchema["properties"].(map[string]any)
	tid := props["task_id"].(map[string]any)
	if tid["type"] != "integer" || !reflect.DeepEqual(tid["examples"], []any{float64(42)}) && !reflect.DeepEqual(tid["examples"], []any{int64(42)}) {
		t.Fatalf("task_id schema %v", tid)
	}
	if _, ok := tid["allOf"]; !ok {
		t.Fatalf("task_id's schema does not combine both tools' (minimum 1): %v", tid)
	}
	if f := props["flag"].(map[string]any); f["type"] != "boolean" || f["x-procgraph-lift"] != nil {
		t.Fatalf("flag schema %v", f)
	}
	req, _ := p.InputSchema["required"].([]any)
	if len(req) != 4 {
		t.Fatalf("lifted parameters are not all required: %v", p.InputSchema["required"])
	}
}

// TestLiftFoldsVersions: captures that differ only in lifted values are
// one version, counted once per usage key; "lift": false keeps them apart.
func TestLiftFoldsVersions(t *testing.T) {
	svc := newLiftService(t)
	code := func(id int) string {
		return "tid = " + itoa(id) + "\nj = tools.get_jobs(task_id=tid, status=\"failed\")\nreturn tools.get_task(task_id=tid)\n"
	}
	var name string
	for i, id := range []int{42, 43, 44, 43} {
		out := mustCapture(t, svc, procedures.CaptureRequest{Code: code(id), SessionID: "s" + itoa(i%3)})
		name = out.Procedure.Name
		if i > 0 && out.VersionCreated {
			t.Fatalf("capture %d made a version", i)
		}
	}
	vs, err := svc.Versions(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Frequency != 3 {
		t.Fatalf("versions %+v, want one of frequency 3", vs)
	}
	for _, id := range []int{42, 43} {
		out := mustCapture(t, svc, procedures.CaptureRequest{Code: code(id), SessionID: "k", NoLift: true})
		if !out.VersionCreated || len(out.Lifted) != 0 {
			t.Fatalf("lift false: %+v", out)
		}
	}
	if vs, _ = svc.Versions(context.Background(), name); len(vs) != 3 {
		t.Fatalf("%d versions, want 3", len(vs))
	}
}

// TestLiftNeverFailsACapture: bad input is captured as written.
func TestLiftNeverFailsACapture(t *testing.T) {
	svc := newLiftService(t)
	for _, code := range []string{
		"return tools.unknown_tool(task_id=42)\n",
		"return tools.get_jobs(**{\"task_id\": 42})\n",
		"r = tools.get_jobs(task_id=42)\nreturn [r, 42]\n",
		"return tools.get_jobs(task_id=\"42\")\n",
		"return tools.get_jobs(task_id=-0x10, status=r\"\\d\")\n",
	} {
		out, err := svc.Capture(context.Background(), procedures.CaptureRequest{Code: code, SessionID: "s"})
		if err != nil {
			t.Fatalf("%q: %v", code, err)
		}
		if strings.HasPrefix(code, "return tools.get_jobs(task_id=-0x10") {
			if len(out.Lifted) != 2 {
				t.Fatalf("%q lifted %+v", code, out.Lifted)
			}
			continue
		}
		if len(out.Lifted) != 0 {
			t.Fatalf("%q lifted %+v", code, out.Lifted)
		}
		if _, err := svc.Version(context.Background(), out.Procedure.Name, signature.CodeHash(code)); err != nil {
			t.Fatalf("%q is not stored as written: %v", code, err)
		}
	}
}

// TestLiftParamsSchemaNamesAreTaken: a name the capture's params_schema
// declares is not taken by a lifted parameter.
func TestLiftParamsSchemaNamesAreTaken(t *testing.T) {
	svc := newLiftService(t)
	out := mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools.get_jobs(task_id=42, status=s)\n", SessionID: "s",
		ParamsSchema: obj(map[string]any{"task_id": map[string]any{"type": "string"}})})
	if out.Procedure.Code != "return tools.get_jobs(task_id=task_id_2, status=s)\n" {
		t.Fatalf("code %q", out.Procedure.Code)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestLiftFollowsTheCatalogue: the same code captured again is lifted as
// the catalogue it is captured under says (the outcome kept for the code
// is the catalogue revision's, and the tools' property schemas typing the
// lifted parameters too), and what one capture answered is not what the
// next one is given.
func TestLiftFollowsTheCatalogue(t *testing.T) {
	svc := newLiftService(t)
	ctx := context.Background()
	code := "return tools.get_jobs(task_id=42, status=\"failed\")\n"
	lifted := func(out procedures.CaptureOutcome) string {
		var got []string
		for _, l := range out.Lifted {
			got = append(got, l.Parameter)
		}
		return strings.Join(got, " ")
	}
	first := mustCapture(t, svc, procedures.CaptureRequest{Code: code, SessionID: "s1"})
	if lifted(first) != "task_id status" {
		t.Fatalf("lifted %q", lifted(first))
	}
	first.Lifted[0].Parameter = "changed"
	again := mustCapture(t, svc, procedures.CaptureRequest{Code: code, SessionID: "s2"})
	if lifted(again) != "task_id status" || again.VersionCreated || again.Procedure.Code != first.Procedure.Code {
		t.Fatalf("the same code again: lifted %q, version created %v, code %q", lifted(again), again.VersionCreated, again.Procedure.Code)
	}
	// The outcome is kept from the second capture on, and served from the third.
	again.Lifted[1].Parameter = "changed"
	third := mustCapture(t, svc, procedures.CaptureRequest{Code: code, SessionID: "s2"})
	if lifted(third) != "task_id status" {
		t.Fatalf("a third time: lifted %q", lifted(third))
	}
	third.Lifted[0].Parameter = "changed"
	if fourth := mustCapture(t, svc, procedures.CaptureRequest{Code: code, SessionID: "s2"}); lifted(fourth) != "task_id status" {
		t.Fatalf("a fourth time: lifted %q", lifted(fourth))
	}
	recapture := func(tools []procedures.Tool, session string) procedures.CaptureOutcome {
		t.Helper()
		if _, err := svc.PutCatalogue(ctx, tools, "tester"); err != nil {
			t.Fatal(err)
		}
		// A capture reads the catalogue after its write: the next one lifts with it.
		mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools.kill_job(panda_id=p)\n", SessionID: session})
		return mustCapture(t, svc, procedures.CaptureRequest{Code: code, SessionID: session})
	}
	changed := slices.Clone(liftTools)
	changed[1] = procedures.Tool{Name: "get_jobs", ReadOnly: true, InputSchema: obj(map[string]any{
		"task_id": map[string]any{"type": "integer", "x-procgraph-lift": false},
		"status":  map[string]any{"type": "string", "maxLength": 3},
	})}
	out := recapture(changed, "s3")
	if len(out.Lifted) != 0 || !out.VersionCreated {
		t.Fatalf("under a catalogue that opts task_id out and bounds status: lifted %q, version created %v", lifted(out), out.VersionCreated)
	}
	if _, err := svc.Version(ctx, out.Procedure.Name, signature.CodeHash(code)); err != nil {
		t.Fatalf("the code is not stored as written: %v", err)
	}
	changed[1].InputSchema = obj(map[string]any{
		"task_id": map[string]any{"type": "integer", "x-procgraph-lift": false},
		"status":  map[string]any{"type": "string", "description": "the jobs' status"},
	})
	out = recapture(changed, "s4")
	if lifted(out) != "status" || !out.VersionCreated {
		t.Fatalf("lifted %q, version created %v", lifted(out), out.VersionCreated)
	}
	v, err := svc.Version(ctx, out.Procedure.Name, signature.CodeHash("return tools.get_jobs(task_id=42, status=status)\n"))
	if err != nil {
		t.Fatal(err)
	}
	status, _ := v.InputSchema["properties"].(map[string]any)["status"].(map[string]any)
	if status["description"] != "the jobs' status" {
		t.Fatalf("status is typed from another catalogue: %v", status)
	}
}
