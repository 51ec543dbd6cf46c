package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/search"
)

// FillScenarios makes s hold what the suite's scenarios write, all in one
// store: a catalogue, captures succeeded and failed with causes (one named
// only by a failed capture), several versions with a promotion, nested
// procedures (one calling a retired one), uses and replays, a grant, a
// revoked grant, a retirement and decisions of every kind.
func FillScenarios(tb testing.TB, s procedures.Store) {
	tb.Helper()
	ctx := context.Background()
	cat, err := procedures.NewCatalogue([]procedures.Tool{
		{Name: "get_jobs", ReadOnly: true, Description: "jobs", InputSchema: map[string]any{"type": "object"}},
		{Name: "get_logs", ReadOnly: true},
		{Name: "kill_job", ExternalAccess: true},
		{Name: "fetch_url", ReadOnly: true, ExternalAccess: true, Server: "web", UpstreamName: "fetch-url"},
	})
	if err != nil {
		tb.Fatal(err)
	}
	MustPutCatalogue(tb, s, cat)
	jobs := []string{"get_jobs", "get_logs"}
	kill := []string{"get_jobs", "kill_job"}
	h2, hk := HashOf(jobs, "h2"), HashOf(kill, "hk")
	MustCapture(tb, s, WithCause(Real(jobs, "h1", "k1", At(1)), "slow job", "a job is slow"))
	MustCapture(tb, s, WithCause(Real(jobs, "h1", "k2", At(2)), "slow job", ""))
	MustCapture(tb, s, WithCause(Real(jobs, "h2", "k3", At(3)), "stuck job", "stuck"))
	MustCapture(tb, s, WithCause(Failed(Real(jobs, "h3", "k4", At(4))), "failed only", "named by a failure"))
	v := Real(kill, "hk", "k1", At(5))
	v.Version.Parameters = []string{"job_id"}
	v.Version.InputSchema = map[string]any{"type": "object", "properties": map[string]any{"job_id": map[string]any{"type": "string"}}}
	v.Version.Warnings = []procedures.Warning{{Line: 1, Column: 2, Message: "w"}}
	v.Version.Metadata = map[string]any{"agent": "a", "n": 1.5, "trigger_signals": []any{"pilot heartbeat lost"}}
	v.Version.Summary = "kill a job"
	MustCapture(tb, s, WithCause(v, "stuck job", ""))
	MustCapture(tb, s, Failed(Real([]string{"fetch_url"}, "hf", "k5", At(6))))
	nested := Real([]string{"get_logs", NameOf(jobs...)}, "hn", "k6", At(7))
	hn := nested.Version.CodeHash
	MustCapture(tb, s, nested)
	callsKill := Real([]string{NameOf(kill...)}, "hc", "k7", At(8))
	MustCapture(tb, s, callsKill)
	for i, key := range []string{"u1", "u2", "u2"} {
		MustRecordUse(tb, s, procedures.UseInput{Name: NameOf(jobs...), UsageKey: key, Cause: "stuck job", Replay: true, At: At(10 + i),
			Run: &health.Run{Duration: time.Duration(1+40*i) * time.Millisecond, At: At(10 + i)}})
	}
	MustRecordUse(tb, s, procedures.UseInput{Name: NameOf(kill...), CodeHash: hk, UsageKey: "u3", At: At(14)})
	MustRecordUse(tb, s, procedures.UseInput{Name: NameOf(kill...), CodeHash: hk, UsageKey: "u4", At: At(15),
		Run: &health.Run{Failure: health.FailureTimeout, Duration: 20 * time.Second, At: At(15)}})

	name := NameOf(jobs...)
	if _, err := s.Promote(ctx, name, h2, Decision(audit.KindPromote, name, h2, At(20))); err != nil {
		tb.Fatalf("Promote: %v", err)
	}
	g := &procedures.Grant{Enabled: true, GrantedBy: "alice", GrantedAt: At(21), Reason: "safe", Binding: SampleBinding(h2)}
	if _, err := s.SetGrant(ctx, name, g, h2, nil, Decision(audit.KindGrant, name, h2, At(21))); err != nil {
		tb.Fatalf("SetGrant: %v", err)
	}
	nn := nested.Name
	if _, err := s.SetGrant(ctx, nn, g, hn, nil, Decision(audit.KindGrant, nn, hn, At(22))); err != nil {
		tb.Fatalf("SetGrant: %v", err)
	}
	if _, err := s.SetGrant(ctx, nn, nil, hn, nil, Decision(audit.KindRevoke, nn, hn, At(23))); err != nil {
		tb.Fatalf("SetGrant(revoke): %v", err)
	}
	kn := NameOf(kill...)
	r := &procedures.Retirement{RetiredBy: "bob", RetiredAt: At(24), Reason: "replaced"}
	if _, err := s.SetRetired(ctx, kn, r, Decision(audit.KindRetire, kn, hk, At(24))); err != nil {
		tb.Fatalf("SetRetired: %v", err)
	}
	for i := range 7 {
		d := Decision(audit.KindInvoke, name, h2, At(30+i/2))
		d.Phase, d.AllowedTools, d.Note = audit.PhaseAutomatic, jobs, "n"
		if i%3 == 0 {
			d.Outcome, d.Reason, d.Suggestion, d.AllowedTools = audit.Denied, audit.ReasonStateChangingAuto, "ask", nil
		}
		if err := s.AppendDecision(ctx, d); err != nil {
			tb.Fatalf("AppendDecision: %v", err)
		}
		// What happened to the runs of two of them (a dump carries it).
		if result := map[int]string{1: health.ResultSucceeded, 2: health.FailureInvalidArguments}[i]; result != "" {
			if err := s.SetDecisionResult(ctx, d.ID, result); err != nil {
				tb.Fatalf("SetDecisionResult: %v", err)
			}
		}
	}
	cd := Decision(audit.KindCatalogue, "", cat.Revision, At(40))
	cd.AllowedTools = []string{} // as the Recorder builds it: [] must stay [], the nil ones above null
	if err := s.AppendDecision(ctx, cd); err != nil {
		tb.Fatalf("AppendDecision: %v", err)
	}
	ts, ok := s.(gate.TurnStore)
	if !ok {
		return
	}
	for i, st := range []gate.TurnStatus{gate.TurnPending, gate.TurnRejected, gate.TurnPending} {
		r := gate.TurnRecord{Turn: gate.Turn{ID: fmt.Sprintf("turn_%d", i), SessionID: "sess-" + fmt.Sprint(i%2),
			Phase: audit.PhaseInteractive, CodeHash: HashOf(kill, "turn"), Signature: kill, StateChangingTools: []string{"kill_job"},
			Summary: "kill", Status: gate.TurnPending, RequestedBy: "agent", RequestedAt: At(50 + i), Deadline: At(5000 + i)},
			Code: CodeOf(kill, "turn"), Dialect: "starlark", Arguments: map[string]any{"job": "j1"},
			Capture: &gate.TurnCapture{Summary: "kill a job"}}
		if err := ts.CreateApproval(ctx, r, gate.PendingBounds{Total: 10}, At(50+i)); err != nil {
			tb.Fatalf("CreateApproval: %v", err)
		}
		if st != gate.TurnPending {
			next := r
			next.Status = st
			next.Resolution = &gate.Resolution{By: "carol", At: At(60 + i)}
			if _, err := ts.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnPending}, true, At(60+i)); err != nil {
				tb.Fatalf("TransitionTurn: %v", err)
			}
		}
	}
	for i, hash := range []string{hk, h2, hn} {
		p := gate.SessionPolicy{SessionID: "sess-" + fmt.Sprint(i%2), CodeHash: hash, Policy: gate.ChoiceAutoRun,
			Summary: "s", SetBy: "carol", SetAt: At(70 + i), RequestedBy: "agent", Binding: SampleBinding(hash)}
		if i == 1 {
			p.RequestedBy, p.Binding = "", nil // as stored before policies were bound
		}
		if err := ts.PutPolicy(ctx, p, Decision(audit.KindInvoke, "", hash, At(70+i))); err != nil {
			tb.Fatalf("PutPolicy: %v", err)
		}
	}
}

// MustDump exports s (without recordings) and returns the dump.
func MustDump(tb testing.TB, s procedures.Store, source string) []byte {
	tb.Helper()
	return MustDumpWith(tb, s, source, dump.DumpOptions{})
}

// MustDumpWith exports s with opts and returns the dump.
func MustDumpWith(tb testing.TB, s procedures.Store, source string, opts dump.DumpOptions) []byte {
	tb.Helper()
	ds, ok := s.(dump.Store)
	if !ok {
		tb.Fatalf("%T is no dump.Store", s)
	}
	var buf bytes.Buffer
	w := dump.NewWriter(&buf, source, "test")
	if err := ds.Dump(context.Background(), w, opts); err != nil {
		tb.Fatalf("Dump: %v", err)
	}
	if err := w.Close(); err != nil {
		tb.Fatalf("Dump: %v", err)
	}
	return buf.Bytes()
}

// MustImport imports dump into s.
func MustImport(tb testing.TB, s procedures.Store, data []byte, batch int) dump.ImportSummary {
	tb.Helper()
	sum, err := Import(s, data, batch)
	if err != nil {
		tb.Fatalf("Import: %v", err)
	}
	return sum
}

// Import imports dump into s in batches of batch records.
func Import(s procedures.Store, data []byte, batch int) (dump.ImportSummary, error) {
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return dump.Import(context.Background(), s.(dump.Store), open, trusted(dump.ImportOptions{BatchSize: batch}))
}

// trusted is opts for the suite's round trips, which compare the moved
// store with the original: authorizations trusted, the import's time
// before every fixture's deadline and an approval timeout past them
// (RunDumpAdmission tests what an import admits otherwise).
func trusted(opts dump.ImportOptions) dump.ImportOptions {
	opts.TrustAuthorizations, opts.ApprovalTimeout = true, 24*time.Hour
	opts.Now = func() time.Time { return At(0) }
	return opts
}

// DumpBody is a dump's lines without its header and trailer (the header
// names the source store and the time; the trailer's checksum covers it).
func DumpBody(data []byte) []string {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	return lines[1 : len(lines)-1]
}

// Reads is every read of s the round trip compares: Find in every filter
// and page, every procedure with its versions and each version, causes,
// the catalogue and the audit log in pages, as JSON.
func Reads(tb testing.TB, s procedures.Store) string {
	tb.Helper()
	ctx := context.Background()
	out := map[string]any{}
	all, total := MustFind(tb, s, procedures.Query{})
	out["find"] = []any{all, total}
	for i, q := range []procedures.Query{
		{Limit: 2}, {Limit: 2, Offset: 2}, {Limit: 3, Offset: 4}, {Status: procedures.StatusFailed},
		{Status: procedures.StatusSucceeded}, {ReadOnly: ptr(true)}, {ReadOnly: ptr(false)},
		{Exposed: ptr(true)}, {Exposed: ptr(false)}, {Exposed: ptr(true), AllowMutating: true},
		{Tools: []string{"get_jobs"}}, {Causes: []string{"stuck job", "failed only"}}, {MinTools: 2},
		{Causes: []string{"slow job"}, Limit: 1, Offset: 0},
	} {
		ps, n := MustFind(tb, s, q)
		out["find"+string(rune('a'+i))] = []any{names(ps), n}
	}
	// Relevance search: what each q finds (the engines' text scores
	// differ between backends; the matches and totals must not).
	for _, q := range []string{"job", "stuck", "named failure", "kill", "heartbeat", "get logs", "fetch url", "jobs slow", "nothing here"} {
		terms, err := search.Terms(q)
		if err != nil {
			tb.Fatalf("SearchTerms(%q): %v", q, err)
		}
		for i, f := range []procedures.Query{{}, {Status: procedures.StatusSucceeded}, {Exposed: ptr(true), AllowMutating: true}} {
			f.Search = terms
			ps, n := MustFind(tb, s, f)
			found := names(ps)
			slices.Sort(found)
			out[fmt.Sprintf("q %q %d", q, i)] = []any{found, n}
		}
	}
	for _, p := range all {
		vs, err := s.Versions(ctx, p.Name)
		if err != nil {
			tb.Fatalf("Versions: %v", err)
		}
		var full []any
		for _, v := range vs {
			full = append(full, MustVersion(tb, s, p.Name, v.CodeHash))
		}
		out["p "+p.Name] = []any{MustGet(tb, s, p.Name), vs, full}
	}
	causes, err := s.Causes(ctx)
	if err != nil {
		tb.Fatalf("Causes: %v", err)
	}
	out["causes"] = causes
	for _, c := range causes {
		cc, ps := MustCause(tb, s, c.Name)
		out["cause "+c.Name] = []any{cc, ps}
	}
	cat, err := s.Catalogue(ctx)
	if err != nil {
		tb.Fatalf("Catalogue: %v", err)
	}
	out["catalogue"] = cat
	for _, f := range []audit.DecisionFilter{{Limit: 3}, {Kind: audit.KindInvoke, Limit: 2}, {Procedure: all[0].Name, Limit: 2}} {
		var pages []any
		for {
			ds := MustDecisions(tb, s, f)
			if len(ds) == 0 {
				break
			}
			pages = append(pages, ds)
			f.Before = ds[len(ds)-1].ID
		}
		out["decisions "+string(f.Kind)+f.Procedure] = pages
	}
	if ts, ok := s.(gate.TurnStore); ok {
		turns, err := ts.ListApprovals(ctx, gate.ApprovalFilter{Limit: 500})
		if err != nil {
			tb.Fatalf("ListApprovals: %v", err)
		}
		out["approvals"] = turns
		for _, t := range turns {
			one, err := ts.GetApproval(ctx, t.ID)
			if err != nil {
				tb.Fatalf("GetApproval: %v", err)
			}
			out["approval "+t.ID] = one
		}
		for _, sess := range []string{"sess-0", "sess-1"} {
			ps, err := ts.Policies(ctx, sess)
			if err != nil {
				tb.Fatalf("Policies: %v", err)
			}
			out["policies "+sess] = ps
		}
	}
	b, err := json.MarshalIndent(deepEmptyToNil(JSONValue(tb, out)), "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// RunDumpRoundTrip fills a store from from with the scenarios, exports it,
// imports the dump into a store from to, exports that: the dumps are equal
// record for record and every read answers the same.
func RunDumpRoundTrip(t *testing.T, from, to NewStore) {
	a := from(t)
	FillScenarios(t, a)
	d1 := MustDump(t, a, "a")
	b := to(t)
	sum := MustImport(t, b, d1, 7)
	if sum.Applied[dump.TypeProcedure] != 5 || sum.Resumed != 0 {
		t.Errorf("import applied %v (resumed %d), want 5 procedures", sum.Applied, sum.Resumed)
	}
	if _, ok := a.(gate.TurnStore); ok && (sum.Applied[dump.TypeApproval] != 3 || sum.Applied[dump.TypePolicy] != 3) {
		t.Errorf("import applied %v, want 3 approvals and 3 policies", sum.Applied)
	}
	if c, ok := b.(interface{ Check(context.Context) error }); ok {
		if err := c.Check(context.Background()); err != nil {
			t.Errorf("the imported store fails its check: %v", err)
		}
	}
	d2 := MustDump(t, b, "b")
	b1, b2 := DumpBody(d1), DumpBody(d2)
	if len(b1) != len(b2) {
		t.Errorf("dump of the import has %d records, the original %d", len(b2), len(b1))
	}
	for i := range min(len(b1), len(b2)) {
		if b1[i] != b2[i] {
			t.Errorf("record %d differs:\n  original %s\n  imported %s", i+1, b1[i], b2[i])
		}
	}
	if ra, rb := Reads(t, a), Reads(t, b); ra != rb {
		t.Errorf("reads differ after the round trip:\n--- original\n%s\n--- imported\n%s", ra, rb)
	}
	// The audit log answers byte for byte the same: allowed_tools [] stays
	// [] and null stays null (Reads takes them as one).
	if da, db := decisionsJSON(t, a), decisionsJSON(t, b); da != db {
		t.Errorf("the audit log differs after the round trip:\n--- original\n%s\n--- imported\n%s", da, db)
	}
	if m, err := b.(dump.Store).LoadState(context.Background()); err != nil || m != nil {
		t.Errorf("LoadState after the import = %v, %v; want none", m, err)
	}
	// A second import is refused: the store is no longer empty.
	_, err := Import(b, d1, 0)
	RequireCode(t, err, fault.CodeConflict)
	testLoadOnce(t, to(t), d1)
}

// decisionsJSON is s's whole audit log as the API encodes it.
func decisionsJSON(tb testing.TB, s procedures.Store) string {
	tb.Helper()
	b, err := json.Marshal(MustDecisions(tb, s, audit.DecisionFilter{Limit: 1000}))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// testLoadOnce: a batch at or before the marker's line is not applied
// again (Load does nothing), so loading creates what it loads once.
func testLoadOnce(t *testing.T, s procedures.Store, data []byte) {
	ctx := context.Background()
	d, err := dump.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var recs []dump.Record
	for len(recs) == 0 || recs[len(recs)-1].Type != dump.TypeVersion {
		r, err := d.Next()
		if err != nil {
			t.Fatalf("reading the dump: %v", err)
		}
		recs = append(recs, r)
	}
	ds := s.(dump.Store)
	last := int64(len(recs) + 1)
	for i, m := range []dump.LoadMarker{{DumpID: "x", Line: last}, {DumpID: "x", Line: last}, {DumpID: "x", Line: 2}} {
		if err := ds.Load(ctx, m, recs); err != nil {
			t.Fatalf("Load %d of the first procedure's records (to line %d): %v", i+1, m.Line, err)
		}
	}
	if m, err := ds.LoadState(ctx); err != nil || m == nil || m.Line != last {
		t.Errorf("LoadState = %+v, %v; want line %d", m, err, last)
	}
	if err := ds.FinishLoad(ctx, "x"); err != nil {
		t.Fatalf("FinishLoad: %v", err)
	}
	p := recs[len(recs)-2].Procedure
	if got := MustGet(t, s, p.Name); got.Frequency != p.Frequency {
		t.Errorf("%s loaded thrice has frequency %d, want %d", p.Name, got.Frequency, p.Frequency)
	}
}

// Reseal rebuilds a dump from its header and body lines with a trailer that
// matches them: a dump whose only fault is its order or content.
func Reseal(tb testing.TB, header string, body []string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	buf.WriteString(header + "\n")
	counts := dump.Counts{}
	for _, l := range body {
		buf.WriteString(l + "\n")
		var env struct {
			Type dump.Type `json:"type"`
		}
		_ = json.Unmarshal([]byte(l), &env)
		counts[env.Type]++
	}
	sum := sha256.Sum256(buf.Bytes())
	tr, err := json.Marshal(map[string]any{"type": "trailer", "data": dump.TrailerRecord{
		Records: int64(len(body)), Counts: counts, SHA256: hex.EncodeToString(sum[:])}})
	if err != nil {
		tb.Fatal(err)
	}
	buf.Write(append(tr, '\n'))
	return buf.Bytes()
}

// RunDumpRefusals: truncated, reordered, repeated and corrupt dumps are
// refused naming their line, and leave the target store empty, with no
// import marker.
func RunDumpRefusals(t *testing.T, newStore NewStore) {
	src := newStore(t)
	FillScenarios(t, src)
	data := MustDump(t, src, "src")
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	header, body := lines[0], lines[1:len(lines)-1]
	find := func(typ string, n int) int {
		for i, l := range body {
			if strings.HasPrefix(l, `{"type":"`+typ+`"`) {
				if n == 0 {
					return i
				}
				n--
			}
		}
		t.Fatalf("no %s record %d", typ, n)
		return -1
	}
	with := func(edit func(b []string) []string) []byte {
		return Reseal(t, header, edit(append([]string(nil), body...)))
	}
	swap := func(i, j int) func(b []string) []string {
		return func(b []string) []string { b[i], b[j] = b[j], b[i]; return b }
	}
	repeat := func(i int) func(b []string) []string {
		return func(b []string) []string { return append(b[:i+1], b[i:]...) }
	}
	half := len(data) / 2
	cases := []struct {
		name string
		dump []byte
		want string
	}{
		{"empty file", nil, "line 1"},
		{"truncated mid-line", data[:half], "truncated"},
		{"truncated at a line end", []byte(strings.Join(lines[:len(lines)/2], "\n") + "\n"), "truncated"},
		{"no trailer", []byte(strings.Join(lines[:len(lines)-1], "\n") + "\n"), "truncated"},
		{"checksum", []byte(strings.Replace(string(data), "a job is slow", "a job is SLOW", 1)), "checksum"},
		{"not JSON", with(func(b []string) []string { b[3] = b[3][:10]; return b }), "line 5"},
		{"unknown type", with(func(b []string) []string { b[2] = `{"type":"secret","data":{}}`; return b }), "unknown record type"},
		{"unknown field", with(func(b []string) []string {
			b[find("procedure", 0)] = strings.Replace(b[find("procedure", 0)], `"name"`, `"nam":1,"name"`, 1)
			return b
		}), "unknown field"},
		{"procedures reordered", with(swap(find("procedure", 0), find("procedure", 1))), "outside its procedure"},
		{"decisions reordered", with(swap(find("decision", 0), find("decision", 1))), "out of order"},
		{"causes reordered", with(swap(find("cause", 0), find("cause", 1))), "out of order"},
		{"usage key repeated", with(repeat(find("usage", 0))), "repeated"},
		{"decision repeated", with(repeat(find("decision", 2))), "repeated"},
		{"version repeated", with(repeat(find("version", 0))), "repeated"},
		{"catalogue repeated", with(repeat(find("catalogue", 0))), "second catalogue"},
		{"version dropped", with(func(b []string) []string { i := find("version", 0); return append(b[:i], b[i+1:]...) }), "not a version of"},
		{"cause dropped", with(func(b []string) []string { i := find("cause", 0); return append(b[:i], b[i+1:]...) }), "does not hold"},
		{"data after the trailer", append(append([]byte(nil), data...), body[0]+"\n"...), "after the trailer"},
		{"header twice", with(func(b []string) []string { return append([]string{header}, b...) }), "second header"},
		{"policy session id with a control character", with(func(b []string) []string {
			i := find("policy", 0)
			b[i] = strings.Replace(b[i], `"session_id":"`, `"session_id":"\u0007`, 1)
			return b
		}), "session_id"},
		{"version code another hash", with(func(b []string) []string {
			i := find("version", 1)
			b[i] = strings.Replace(b[i], `tools.get_logs()`, `tools.kill_job()`, 1)
			return b
		}), "its code gives code_hash"},
		{"version opaque flag", with(func(b []string) []string {
			i := find("version", 0)
			b[i] = strings.Replace(b[i], `"opaque":false`, `"opaque":true`, 1)
			return b
		}), "opaque"},
		{"version code of another dialect", with(func(b []string) []string {
			i := find("version", 0)
			b[i] = strings.Replace(b[i], `"dialect":"starlark"`, `"dialect":"cobol"`, 1)
			return b
		}), "dialect"},
		{"approval code another hash", with(func(b []string) []string {
			i := find("approval", 0)
			b[i] = strings.Replace(b[i], `tools.kill_job()`, `tools.fetch_url()`, 1)
			return b
		}), "its code gives code_hash"},
		{"decision note past the bound", with(func(b []string) []string {
			i := find("decision", 5)
			b[i] = strings.Replace(b[i], `"note":"n"`, `"note":"`+strings.Repeat("n", fields.MaxNoteBytes+1)+`"`, 1)
			return b
		}), "note"},
		{"decision actor holding a token", with(func(b []string) []string {
			i := find("decision", 0)
			b[i] = strings.Replace(b[i], `"actor":"tester"`, `"actor":"pgt_AAAAAAAAAAAAAAAAAAAAAAAAAAAA"`, 1)
			return b
		}), "token"},
		{"approval session id with a control character", with(func(b []string) []string {
			i := find("approval", 0)
			b[i] = strings.Replace(b[i], `"session_id":"`, `"session_id":"\u0000`, 1)
			return b
		}), "session_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			_, err := Import(s, c.dump, 3)
			e := RequireCode(t, err, fault.CodeInvalid)
			if !strings.Contains(e.Error(), "line ") || !strings.Contains(e.Error(), c.want) {
				t.Errorf("error %q names no line or not %q", e.Error(), c.want)
			}
			ds := s.(dump.Store)
			if empty, err := ds.Empty(context.Background()); err != nil || !empty {
				t.Errorf("after a refused import the store is not empty (%v)", err)
			}
			if m, err := ds.LoadState(context.Background()); err != nil || m != nil {
				t.Errorf("after a refused import LoadState = %v, %v", m, err)
			}
		})
	}
}

// deepEmptyToNil is v (a decoded JSON value) with every empty list and
// object, at any depth, null: the suite's "nil and empty are
// interchangeable".
func deepEmptyToNil(v any) any {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil
		}
		for i := range x {
			x[i] = deepEmptyToNil(x[i])
		}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		for k := range x {
			x[k] = deepEmptyToNil(x[k])
		}
	}
	return v
}

// RunDumpAdmission: a dump is data, not authority (docs/design.md). The
// scenarios' dump (its grant and policies bound) imported without
// --trust-authorizations at At(0), with an approval timeout of 330 s and a
// pending bound of 1: the first pending turn arrives pending with its
// deadline moved to At(330), the second expired (past the bound) and
// purged of code and arguments, the rejected one as it was; the grant and
// every session policy arrive unbound (inactive). Trusted, they keep their
// bindings.
func RunDumpAdmission(t *testing.T, from, to NewStore) {
	ctx := context.Background()
	a := from(t)
	FillScenarios(t, a)
	data := MustDump(t, a, "a")
	b := to(t)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	if _, err := dump.Import(ctx, b.(dump.Store), open, dump.ImportOptions{BatchSize: 4,
		Now: func() time.Time { return At(0) }, ApprovalTimeout: 330 * time.Second, Pending: gate.PendingBounds{Total: 1}}); err != nil {
		t.Fatalf("Import: %v", err)
	}
	name := NameOf("get_jobs", "get_logs")
	if g := MustGet(t, a, name).Grant; g == nil || g.Binding == nil {
		t.Fatalf("the scenarios' grant of %s is not bound: no test", name)
	}
	if g := MustGet(t, b, name).Grant; g == nil || !g.Enabled || g.Binding != nil {
		t.Errorf("imported %s: grant %+v; want held, unbound", name, g)
	}
	ts, ok := b.(gate.TurnStore)
	if !ok {
		return
	}
	want := map[string]struct {
		status   gate.TurnStatus
		deadline time.Time
		code     bool
	}{
		"turn_0": {gate.TurnPending, At(330), true},
		"turn_1": {gate.TurnRejected, At(5001), false},
		"turn_2": {gate.TurnExpired, At(330), false},
	}
	for id, w := range want {
		r, err := ts.GetApproval(ctx, id)
		if err != nil {
			t.Fatalf("GetApproval(%s): %v", id, err)
		}
		if r.Status != w.status || !r.Deadline.Equal(Ms(w.deadline)) || r.HoldsValues() != w.code {
			t.Errorf("imported %s: %s, deadline %v, holds values %v; want %s, %v, %v", id, r.Status, r.Deadline, r.HoldsValues(), w.status, Ms(w.deadline), w.code)
		}
	}
	for _, sess := range []string{"sess-0", "sess-1"} {
		ps, err := ts.Policies(ctx, sess)
		if err != nil || len(ps) == 0 {
			t.Fatalf("Policies(%s) = %v, %v", sess, ps, err)
		}
		for _, p := range ps {
			if p.Binding != nil {
				t.Errorf("imported policy %s/%s is bound, want unbound", sess, p.CodeHash)
			}
		}
	}
	trusted := to(t) // (on a shared database, b is gone now)
	MustImport(t, trusted, data, 4)
	if g := MustGet(t, trusted, name).Grant; g == nil || g.Binding == nil {
		t.Errorf("imported trusted, %s: grant %+v; want bound", name, g)
	}
	ps, err := trusted.(gate.TurnStore).Policies(ctx, "sess-0")
	if err != nil || len(ps) != 2 || ps[0].Binding == nil || ps[1].Binding == nil {
		t.Errorf("imported trusted, policies of sess-0: %+v, %v; want both bound", ps, err)
	}
}

// RunDumpPausedTurn: a turn paused at a call (review at the call) arrives
// expired, purged of its pause, code and arguments — its pause holds
// answers the target's tools never gave — while the same turn without a
// pause arrives pending.
func RunDumpPausedTurn(t *testing.T, from, to NewStore) {
	ctx := context.Background()
	a := from(t)
	ts := a.(gate.TurnStore)
	kill := []string{"kill_job"}
	plain := PendingTurn("s", At(0), time.Hour)
	paused := PendingTurn("s", At(1), time.Hour)
	for _, r := range []*gate.TurnRecord{&plain, &paused} {
		r.Code, r.CodeHash, r.Arguments = CodeOf(kill, "paused"), HashOf(kill, "paused"), map[string]any{"job": "j1"}
	}
	paused.Review = gate.ReviewAtCall
	paused.Pause = &replay.Pause{Block: "b", Position: 1, Tool: "kill_job", Arguments: map[string]any{"panda_id": 4007}, ArgsDigest: "d",
		Calls: []replay.PausedCall{{Tool: "get_task_jobs_summary", Arguments: map[string]any{"task_id": 7}, Response: []byte(`{"failed":0}`)}}}
	paused.Call = gate.CallOf(paused.Pause)
	MustCreateApproval(t, ts, plain, 4, At(0))
	MustCreateApproval(t, ts, paused, 4, At(1))
	data := MustDump(t, a, "a")
	b := to(t)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	if _, err := dump.Import(ctx, b.(dump.Store), open, dump.ImportOptions{BatchSize: 4,
		Now: func() time.Time { return At(2) }, ApprovalTimeout: 330 * time.Second, Pending: gate.PendingBounds{Total: 4}}); err != nil {
		t.Fatalf("Import: %v", err)
	}
	for id, want := range map[string]gate.TurnStatus{plain.ID: gate.TurnPending, paused.ID: gate.TurnExpired} {
		r, err := b.(gate.TurnStore).GetApproval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != want || (want == gate.TurnExpired && (r.HoldsValues() || r.Pause != nil)) {
			t.Errorf("imported %s: %s, pause %+v, holds values %v; want %s", id, r.Status, r.Pause, r.HoldsValues(), want)
		}
	}
}
