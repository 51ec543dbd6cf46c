package procedures_test

import (
	"context"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/procedures"
)

// countedService is a Service over a fresh embedded store (also returned)
// whose Recorder counts into a real metrics registry.
func countedService(t *testing.T) (*procedures.Service, *metrics.Registry, *embedded.Store) {
	t.Helper()
	store, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := metrics.New()
	svc := procedures.NewService(store, procedures.Options{Counter: reg})
	if _, err := svc.PutCatalogue(context.Background(), []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}, {Name: "kill_job"},
	}, "tester"); err != nil {
		t.Fatal(err)
	}
	return svc, reg, store
}

// decisionCounts reads procgraph_decisions_total as "kind/outcome/reason" -> count.
func decisionCounts(t *testing.T, reg *metrics.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != metrics.Decisions {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[l["kind"]+"/"+l["outcome"]+"/"+l["reason"]] = m.GetCounter().GetValue()
		}
	}
	return out
}

// storedCounts counts the stored audit records the same way.
func storedCounts(t *testing.T, svc *procedures.Service) map[string]float64 {
	t.Helper()
	ds, err := svc.Decisions(context.Background(), audit.DecisionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, d := range ds {
		out[string(d.Kind)+"/"+string(d.Outcome)+"/"+d.Reason]++
	}
	return out
}

var hash = strings.Repeat("ab", 32)

// validInvoke is a record that passes the audit rule.
func validInvoke() audit.Decision {
	return audit.Decision{Kind: audit.KindInvoke, Procedure: "proc__get_jobs", CodeHash: hash,
		Phase: audit.PhaseAutomatic, Outcome: audit.Allowed, Reason: audit.ReasonReadOnly,
		Actor: "alice", AllowedTools: []string{"get_jobs"}}
}

// TestRecorderBuildsStoresAndCounts: a record gets its id, its time and its
// defaults, is stored as returned and counted once; one that cannot be
// stored is not counted; an offline recorder builds and counts.
func TestRecorderBuildsStoresAndCounts(t *testing.T) {
	ctx := context.Background()
	svc, reg, store := countedService(t)
	before := decisionCounts(t, reg)
	in := validInvoke()
	in.Actor, in.AllowedTools = "", nil
	d, err := svc.Recorder().Record(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^pgd_[0-9a-f]{32}$`).MatchString(d.ID) || d.At.IsZero() || d.At.Location() != time.UTC ||
		d.At.Nanosecond()%int(time.Millisecond) != 0 || d.AllowedTools == nil || d.Actor != "anonymous" {
		t.Fatalf("built record: %+v", d)
	}
	ds, err := svc.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindInvoke})
	if err != nil || len(ds) != 1 || !reflect.DeepEqual(ds[0], d) {
		t.Fatalf("stored %+v, returned %+v (%v)", ds, d, err)
	}
	key := "invoke/allowed/read_only"
	if got := decisionCounts(t, reg)[key] - before[key]; got != 1 {
		t.Fatalf("counted %v times, want 1", got)
	}

	broken := procedures.NewRecorder(failingAudit{store}, procedures.RecorderOptions{Counter: reg})
	if _, err := broken.Record(ctx, validInvoke()); fault.ErrorCode(err) != fault.CodeUnavailable {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if got := decisionCounts(t, reg)[key] - before[key]; got != 1 {
		t.Fatalf("a record that was not stored was counted (%v)", got)
	}

	offline := procedures.NewRecorder(nil, procedures.RecorderOptions{Counter: reg})
	od, err := offline.Record(ctx, validInvoke())
	if err != nil || od.ID == "" || od.ID == d.ID {
		t.Fatalf("offline: %+v %v", od, err)
	}
	if got := decisionCounts(t, reg)[key] - before[key]; got != 2 {
		t.Fatalf("the offline record was not counted (%v)", got)
	}
	if ds, _ := svc.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindInvoke}); len(ds) != 1 {
		t.Fatalf("the offline record reached the store: %+v", ds)
	}
}

// TestRecorderEnforcesTheAuditRule: a record that would carry an argument
// value, code, a token or a result is refused by the recorder itself:
// nothing is stored, nothing counted.
func TestRecorderEnforcesTheAuditRule(t *testing.T) {
	ctx := context.Background()
	svc, reg, _ := countedService(t)
	token := "pgt_" + strings.Repeat("Zm9vYmFy", 6)[:43]
	cases := []struct {
		name   string
		change func(*audit.Decision)
		want   fault.Code // "" = accepted
	}{
		{"valid", func(*audit.Decision) {}, ""},
		{"catalogue revision, no procedure", func(d *audit.Decision) {
			d.Kind, d.Procedure, d.CodeHash, d.Phase, d.Reason = audit.KindCatalogue, "", "sha256:"+hash, "", audit.ReasonCatalogueReplaced
		}, ""},
		{"an actor with spaces", func(d *audit.Decision) { d.Actor = "procgraph serve --tools" }, ""},
		{"an operator's note on two lines", func(d *audit.Decision) { d.Note = "checked with the on-call\nticket 42" }, ""},
		{"argument value in the procedure", func(d *audit.Decision) { d.Procedure = `proc__get_jobs {"task_id": 1}` }, fault.CodeInternal},
		{"code in the procedure", func(d *audit.Decision) { d.Procedure = "a = tools.get_jobs()\nreturn a" }, fault.CodeInternal},
		{"a result in the reason", func(d *audit.Decision) { d.Reason = `read_only: {"jobs": [1, 2]}` }, fault.CodeInternal},
		{"a value as the code hash", func(d *audit.Decision) { d.CodeHash = "task-42" }, fault.CodeInternal},
		{"an upper-case code hash", func(d *audit.Decision) { d.CodeHash = strings.ToUpper(hash) }, fault.CodeInternal},
		{"an argument as an allowed tool", func(d *audit.Decision) { d.AllowedTools = []string{"get_jobs", "task_id=42 "} }, fault.CodeInternal},
		{"an empty allowed tool", func(d *audit.Decision) { d.AllowedTools = []string{""} }, fault.CodeInternal},
		{"output in the suggestion", func(d *audit.Decision) { d.Suggestion = "line 1\nline 2" }, fault.CodeInternal},
		{"a control character in the actor", func(d *audit.Decision) { d.Actor = "alice\x00" }, fault.CodeInternal},
		{"an unknown kind", func(d *audit.Decision) { d.Kind = "arguments" }, fault.CodeInternal},
		{"an unknown outcome", func(d *audit.Decision) { d.Outcome = "maybe" }, fault.CodeInternal},
		{"an unknown phase", func(d *audit.Decision) { d.Phase = "nightly" }, fault.CodeInternal},
		{"an id that is not a decision id", func(d *audit.Decision) { d.ID = "pgd_" + token }, fault.CodeInternal},
		{"a token in the note", func(d *audit.Decision) { d.Note = "use " + token + " next time" }, fault.CodeInvalid},
		{"a bearer credential as the actor", func(d *audit.Decision) { d.Actor = "Bearer s3cr3t-t0ken" }, fault.CodeInvalid},
		{"a token in the suggestion", func(d *audit.Decision) { d.Suggestion = "retry with " + token }, fault.CodeInvalid},
		{"a token as the procedure", func(d *audit.Decision) { d.Procedure = "proc__" + token }, fault.CodeInvalid},
		{"a line break in the session", func(d *audit.Decision) { d.Session = "s1\nactor: op" }, fault.CodeInternal},
		{"a session over the bound", func(d *audit.Decision) { d.Session = strings.Repeat("s", fields.MaxKeyBytes+1) }, fault.CodeInternal},
		{"a token as the session", func(d *audit.Decision) { d.Session = "mcp:" + token }, fault.CodeInvalid},
		{"a note over the bound", func(d *audit.Decision) { d.Note = strings.Repeat("x", fields.MaxNoteBytes+1) }, fault.CodeInvalid},
		{"a note that is not UTF-8", func(d *audit.Decision) { d.Note = "\xff" }, fault.CodeInvalid},
		{"a value as the result", func(d *audit.Decision) { d.Result = "task_id=99999" }, fault.CodeInternal},
		{"an unknown result", func(d *audit.Decision) { d.Result = "partly" }, fault.CodeInternal},
		{"a run's result", func(d *audit.Decision) { d.Result = health.FailureInvalidArguments }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := validInvoke()
			tc.change(&d)
			if got := fault.ErrorCode(procedures.CheckAudit(mustBuildable(t, d))); got != tc.want {
				t.Fatalf("CheckAudit: %q, want %q", got, tc.want)
			}
			before, stored := decisionCounts(t, reg), storedCounts(t, svc)
			rec, err := svc.Recorder().Record(ctx, d)
			if got := fault.ErrorCode(err); got != tc.want {
				t.Fatalf("Record: %v, want %q", err, tc.want)
			}
			after, storedAfter := decisionCounts(t, reg), storedCounts(t, svc)
			added := 0.0
			for k, v := range after {
				added += v - before[k]
			}
			storedAdded := 0.0
			for k, v := range storedAfter {
				storedAdded += v - stored[k]
			}
			want := 0.0
			if tc.want == "" {
				want = 1
				if rec.ID == "" {
					t.Fatal("an accepted record has no id")
				}
			}
			if added != want || storedAdded != want {
				t.Fatalf("counted %v, stored %v, want %v each", added, storedAdded, want)
			}
		})
	}
}

// mustBuildable fills what Build fills, so CheckAudit sees a whole record.
func mustBuildable(t *testing.T, d audit.Decision) audit.Decision {
	t.Helper()
	if d.ID == "" {
		d.ID = audit.NewDecisionID(time.Now())
	}
	return d
}

// TestDecisionHoldsNoValues: an audit record's fields are the ones the
// audit rule checks. A new field fails this test until CheckAudit covers
// it: it must not become a way to record values.
func TestDecisionHoldsNoValues(t *testing.T) {
	want := map[string]string{
		"ID": "string", "Kind": "audit.DecisionKind", "Procedure": "string", "CodeHash": "string",
		"Phase": "audit.Phase", "Outcome": "audit.Outcome", "Reason": "string", "Actor": "string",
		"AllowedTools": "[]string", "At": "time.Time", "Note": "string", "Suggestion": "string", "Session": "string",
		"Result": "string",
	}
	typ := reflect.TypeOf(audit.Decision{})
	got := map[string]string{}
	for i := 0; i < typ.NumField(); i++ {
		got[typ.Field(i).Name] = typ.Field(i).Type.String()
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decision's fields are %v; the audit rule covers %v", got, want)
	}
}

// TestServiceDecisionsAreCountedOnce: every record the service stores —
// catalogue, grant, refused grant, revoke, promote, refused promote — is
// counted exactly once, and nothing else is.
func TestServiceDecisionsAreCountedOnce(t *testing.T) {
	ctx := context.Background()
	svc, reg, _ := countedService(t)
	ro := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	kill := mustCapture(t, svc, procedures.CaptureRequest{Code: killCode}).Procedure
	failed := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode + "\"failed\"\n", Status: procedures.StatusFailed})
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: kill.Name, Enabled: true, Actor: "alice"}); fault.ErrorCode(err) != fault.CodeConflict {
		t.Fatalf("refused grant: %v", err)
	}
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: true, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: false, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	versions, err := svc.Versions(ctx, ro.Name)
	if err != nil || len(versions) != 2 {
		t.Fatalf("versions: %+v %v (failed capture %+v)", versions, err, failed)
	}
	var failedHash string
	for _, v := range versions {
		if v.Status == procedures.StatusFailed {
			failedHash = v.CodeHash
		}
	}
	if _, _, err := svc.Promote(ctx, procedures.PromoteRequest{Name: ro.Name, CodeHash: failedHash, Actor: "bob"}); fault.ErrorCode(err) != fault.CodeConflict {
		t.Fatalf("refused promote: %v", err)
	}
	if _, _, err := svc.Promote(ctx, procedures.PromoteRequest{Name: ro.Name, CodeHash: ro.CodeHash, Actor: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Promote(ctx, procedures.PromoteRequest{Name: ro.Name, CodeHash: "not a hash", Actor: "bob"}); fault.ErrorCode(err) != fault.CodeNotFound {
		t.Fatalf("promote of a malformed hash: %v, want not_found", err)
	}
	stored, counted := storedCounts(t, svc), decisionCounts(t, reg)
	if !reflect.DeepEqual(stored, counted) {
		t.Fatalf("stored %v\ncounted %v", stored, counted)
	}
	for _, k := range []string{"catalogue/allowed/catalogue_replaced", "grant/denied/not_read_only", "grant/allowed/granted",
		"revoke/allowed/revoked", "promote/denied/procedure_not_succeeded", "promote/allowed/promoted"} {
		if counted[k] != 1 {
			t.Errorf("%s counted %v times, want 1", k, counted[k])
		}
	}
}
