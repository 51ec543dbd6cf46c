package dump_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// boundsFixture is a dump with a record of every type, each field one the
// bounds check reads: edit changes them before they are written.
type boundsFixture struct {
	header    struct{ source, version string }
	tools     []procedures.Tool
	cause     *dump.CauseRecord
	procedure *dump.ProcedureRecord
	version   *dump.VersionRecord
	usages    []*dump.UsageRecord
	edge      *dump.EdgeRecord
	decision  *audit.Decision
	approval  *gate.TurnRecord
	policy    *dump.PolicyRecord
}

// The lines of boundsDump's records.
const (
	lineHeader    = 1
	lineCatalogue = 2
	lineCause     = 3
	lineProcedure = 4
	lineVersion   = 5
	lineUsage     = 6
	lineDecision  = 10
	lineApproval  = 11
	linePolicy    = 12
)

// boundsDump is a dump of every record type, edited by edit, and an
// error when the writer cannot write it.
func boundsDump(tb testing.TB, edit func(f *boundsFixture)) []byte {
	tb.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := "tools.get_jobs()\n"
	h1 := signature.CodeHash(code)
	binding := &binding.Binding{CodeHash: h1, StatementHash: h1, Signature: []string{"get_jobs"}, StateChangingTools: []string{},
		Tools: []binding.BoundTool{{Name: "get_jobs"}}, Nested: []binding.BoundNested{}}
	f := &boundsFixture{
		tools: []procedures.Tool{{Name: "get_jobs", ReadOnly: true, Description: "lists the jobs"}},
		cause: &dump.CauseRecord{Name: "slow", Description: "d"},
		procedure: &dump.ProcedureRecord{Name: "proc__get_jobs", Signature: []string{"get_jobs"}, Summary: "s", Current: h1, Frequency: 1,
			CreatedAt: at, UpdatedAt: at, Grant: &procedures.Grant{Enabled: true, GrantedBy: "alice", GrantedAt: at, Reason: "r", CodeHash: h1, Binding: binding},
			Retired: &procedures.Retirement{RetiredBy: "bob", RetiredAt: at, Reason: "r"}, SearchParts: []string{"get_jobs", "get jobs", "slow"}},
		version: &dump.VersionRecord{Procedure: "proc__get_jobs", CodeHash: h1, Code: code, Summary: "s", CapturedAt: at, Frequency: 1,
			Status: procedures.StatusSucceeded, Metadata: map[string]any{"k": "v"}, InputSchema: map[string]any{"type": "object"}},
		usages: []*dump.UsageRecord{
			{Scope: dump.UsageVersion, Procedure: "proc__get_jobs", CodeHash: h1, Key: "s:k"},
			{Scope: dump.UsageProcedure, Procedure: "proc__get_jobs", Key: "s:k"},
			{Scope: dump.UsageEdge, Procedure: "proc__get_jobs", Cause: "slow", Key: "s:k"},
		},
		edge: &dump.EdgeRecord{Cause: "slow", Procedure: "proc__get_jobs", Frequency: 1},
		decision: &audit.Decision{ID: audit.NewDecisionID(at), Kind: audit.KindGrant, Procedure: "proc__get_jobs", CodeHash: h1,
			Outcome: audit.Allowed, Reason: "granted", Actor: "alice", AllowedTools: []string{"get_jobs"}, At: at},
		approval: &gate.TurnRecord{Turn: gate.Turn{ID: "trn_1", SessionID: "sess", Phase: audit.PhaseInteractive, CodeHash: h1,
			Signature: []string{"get_jobs"}, StateChangingTools: []string{}, UnknownTools: []string{}, Summary: "s", Status: gate.TurnPending,
			RequestedBy: "agent", RequestedAt: at, Deadline: at.Add(time.Hour)},
			Code: code, Dialect: "starlark", Arguments: map[string]any{"n": 1},
			Capture: &gate.TurnCapture{Cause: &procedures.CauseInput{Name: "c", Description: "d"}, Summary: "s", Metadata: map[string]any{"k": "v"}},
			Binding: binding},
		policy: &dump.PolicyRecord{SessionID: "sess", CodeHash: h1, Policy: gate.ChoiceAutoRun, Summary: "s", SetBy: "alice", SetAt: at,
			RequestedBy: "agent", Binding: binding},
	}
	f.header.source, f.header.version = "embedded", "test"
	if edit != nil {
		edit(f)
	}
	cat, err := procedures.ReadCatalogue(f.tools) // a catalogue past NewCatalogue's bounds is still written
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	w := dump.NewWriter(&buf, f.header.source, f.header.version)
	recs := []dump.Record{
		{Type: dump.TypeCatalogue, Catalogue: cat},
		{Type: dump.TypeCause, Cause: f.cause},
		{Type: dump.TypeProcedure, Procedure: f.procedure},
		{Type: dump.TypeVersion, Version: f.version},
		{Type: dump.TypeUsage, Usage: f.usages[0]},
		{Type: dump.TypeUsage, Usage: f.usages[1]},
		{Type: dump.TypeEdge, Edge: f.edge},
		{Type: dump.TypeUsage, Usage: f.usages[2]},
		{Type: dump.TypeDecision, Decision: f.decision},
		{Type: dump.TypeApproval, Approval: f.approval},
		{Type: dump.TypePolicy, Policy: f.policy},
	}
	if err := w.Begin(dump.Counts{}); err != nil {
		tb.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// boundCase is one field at a size: at its bound a dump is read, a byte
// (or an item) past it the dump is refused naming the line and the field.
type boundCase struct {
	name  string
	line  int
	field string // the field's path in the error; "" for a dump read
	edit  func(f *boundsFixture)
}

// n is n bytes of c.
func n(c string, size int) string { return strings.Repeat(c, size) }

// bigObject is an object whose JSON is size bytes.
func bigObject(size int) map[string]any {
	const frame = len(`{"k":""}`)
	return map[string]any{"k": n("o", size-frame)}
}

// manyNames is count names.
func manyNames(count int) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = fmt.Sprintf("t%d", i)
	}
	return out
}

// boundCases are, for each kind of field a dump record carries, the field
// at its bound and past it.
func boundCases() []boundCase {
	var cases []boundCase
	add := func(name string, line int, field string, at, past func(f *boundsFixture)) {
		cases = append(cases, boundCase{name + " at the bound", line, "", at}, boundCase{name + " past the bound", line, field, past})
	}
	text := func(name string, line int, field string, bound int, set func(f *boundsFixture, s string)) {
		add(name, line, field, func(f *boundsFixture) { set(f, n("x", bound)) }, func(f *boundsFixture) { set(f, n("x", bound+1)) })
	}
	text("header source", lineHeader, "header.source", fields.MaxKeyBytes, func(f *boundsFixture, s string) { f.header.source = s })
	text("tool description", lineCatalogue, "description", fields.MaxToolDescBytes, func(f *boundsFixture, s string) { f.tools[0].Description = s })
	add("tool input schema", lineCatalogue, "catalogue.tools.0.input_schema",
		func(f *boundsFixture) { f.tools[0].InputSchema = bigObject(fields.MaxBodyBytes) },
		func(f *boundsFixture) { f.tools[0].InputSchema = bigObject(fields.MaxBodyBytes + 1) })
	text("cause name", lineCause, "cause.name", fields.MaxKeyBytes, func(f *boundsFixture, s string) {
		f.cause.Name, f.edge.Cause, f.usages[2].Cause = s, s, s
	})
	text("cause description", lineCause, "cause.description", fields.MaxCauseDescBytes, func(f *boundsFixture, s string) { f.cause.Description = s })
	text("procedure summary", lineProcedure, "procedure.summary", fields.MaxSummaryBytes, func(f *boundsFixture, s string) { f.procedure.Summary = s })
	text("grant reason", lineProcedure, "procedure.grant.reason", fields.MaxReasonBytes, func(f *boundsFixture, s string) { f.procedure.Grant.Reason = s })
	text("grant actor", lineProcedure, "procedure.grant.granted_by", fields.MaxKeyBytes, func(f *boundsFixture, s string) { f.procedure.Grant.GrantedBy = s })
	text("retirement reason", lineProcedure, "procedure.retired.reason", fields.MaxReasonBytes, func(f *boundsFixture, s string) { f.procedure.Retired.Reason = s })
	text("search part", lineProcedure, "procedure.search_parts.3", fields.MaxBodyBytes, func(f *boundsFixture, s string) {
		f.procedure.SearchParts = append(f.procedure.SearchParts, s)
	})
	add("grant binding tools", lineProcedure, "procedure.grant.binding.tools",
		func(f *boundsFixture) { f.procedure.Grant.Binding = bindingOf(f, fields.MaxNames) },
		func(f *boundsFixture) { f.procedure.Grant.Binding = bindingOf(f, fields.MaxNames+1) })
	text("version summary", lineVersion, "version.summary", fields.MaxSummaryBytes, func(f *boundsFixture, s string) { f.version.Summary = s })
	text("warning message", lineVersion, "version.warnings.0.message", fields.MaxReasonBytes, func(f *boundsFixture, s string) {
		f.version.Warnings = []procedures.Warning{{Line: 1, Column: 1, Message: s}}
	})
	add("version metadata", lineVersion, "version.metadata",
		func(f *boundsFixture) { f.version.Metadata = bigObject(fields.MaxBodyBytes) },
		func(f *boundsFixture) { f.version.Metadata = bigObject(fields.MaxBodyBytes + 1) })
	add("version input schema", lineVersion, "version.input_schema",
		func(f *boundsFixture) { f.version.InputSchema = bigObject(fields.MaxBodyBytes) },
		func(f *boundsFixture) { f.version.InputSchema = bigObject(fields.MaxBodyBytes + 1) })
	text("usage key", lineUsage, "usage.key", len("s:")+fields.MaxKeyBytes, func(f *boundsFixture, s string) {
		for _, u := range f.usages {
			u.Key = s
		}
	})
	add("decision allowed tools", lineDecision, "decision.allowed_tools",
		func(f *boundsFixture) { f.decision.AllowedTools = manyNames(fields.MaxNames) },
		func(f *boundsFixture) { f.decision.AllowedTools = manyNames(fields.MaxNames + 1) })
	text("approval summary", lineApproval, "approval.summary", fields.MaxReasonBytes, func(f *boundsFixture, s string) { f.approval.Summary = s })
	text("approval session", lineApproval, "approval.session_id", fields.MaxKeyBytes, func(f *boundsFixture, s string) { f.approval.SessionID = s })
	text("approval requester", lineApproval, "approval.requested_by", fields.MaxKeyBytes, func(f *boundsFixture, s string) { f.approval.RequestedBy = s })
	text("approval capture summary", lineApproval, "approval.capture.summary", fields.MaxSummaryBytes, func(f *boundsFixture, s string) { f.approval.Capture.Summary = s })
	add("approval arguments", lineApproval, "approval.arguments",
		func(f *boundsFixture) { f.approval.Arguments = bigObject(fields.MaxBodyBytes) },
		func(f *boundsFixture) { f.approval.Arguments = bigObject(fields.MaxBodyBytes + 1) })
	add("approval capture metadata", lineApproval, "approval.capture.metadata",
		func(f *boundsFixture) { f.approval.Capture.Metadata = bigObject(fields.MaxBodyBytes) },
		func(f *boundsFixture) { f.approval.Capture.Metadata = bigObject(fields.MaxBodyBytes + 1) })
	add("approval signature", lineApproval, "approval.unknown_tools",
		func(f *boundsFixture) { f.approval.UnknownTools = manyNames(fields.MaxNames) },
		func(f *boundsFixture) { f.approval.UnknownTools = manyNames(fields.MaxNames + 1) })
	text("policy summary", linePolicy, "policy.summary", fields.MaxReasonBytes, func(f *boundsFixture, s string) { f.policy.Summary = s })
	text("policy actor", linePolicy, "policy.set_by", fields.MaxKeyBytes, func(f *boundsFixture, s string) { f.policy.SetBy = s })
	cases = append(cases,
		boundCase{"approval session with a control character", lineApproval, "approval.session_id", func(f *boundsFixture) { f.approval.SessionID = "se\x1bss" }},
		boundCase{"procedure summary of 60 MiB", lineProcedure, "procedure.summary", func(f *boundsFixture) { f.procedure.Summary = n("x", 60<<20) }},
	)
	return cases
}

// bindingOf is f's binding with count tools.
func bindingOf(f *boundsFixture, count int) *binding.Binding {
	b := *f.procedure.Grant.Binding
	b.Tools = make([]binding.BoundTool, count)
	for i := range b.Tools {
		b.Tools[i] = binding.BoundTool{Name: fmt.Sprintf("t%d", i)}
	}
	return &b
}

// TestDumpFieldBounds: every field a dump record carries is bounded as the
// API bounds the same field (internal/fields; docs/dumps.md "Bounds"): at
// its bound the dump reads, past it the dump is refused as invalid naming
// its line and the field, never quoting the value.
func TestDumpFieldBounds(t *testing.T) {
	if _, err := readAll(boundsDump(t, nil)); err != nil {
		t.Fatalf("the fixture is refused: %v", err)
	}
	for _, c := range boundCases() {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(boundsDump(t, c.edit))
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused at the bound: %v", err)
				}
				return
			}
			var fe *fault.Error
			msg := fault.ErrorMessage(err)
			switch {
			case fault.ErrorCode(err) != fault.CodeInvalid:
				t.Fatalf("error %.300v; want invalid", err)
			case !strings.Contains(msg, fmt.Sprintf("dump line %d: ", c.line)) || !strings.Contains(msg, c.field):
				t.Fatalf("error %.300q; want it to name line %d and the field %s", msg, c.line, c.field)
			case len(msg) > 1000:
				t.Fatalf("the error is %d bytes long: it quotes the value", len(msg))
			case !asFault(err, &fe) || fmt.Sprint(fe.Details["line"]) != fmt.Sprint(c.line):
				t.Fatalf("details %v; want line %d", fe, c.line)
			}
		})
	}
}

func asFault(err error, fe **fault.Error) bool {
	e, ok := err.(*fault.Error)
	*fe = e
	return ok
}
