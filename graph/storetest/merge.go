package storetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// mergeCatalogue is the catalogue both merge scenarios hold.
func mergeCatalogue(tb testing.TB) *procedures.Catalogue {
	tb.Helper()
	cat, err := procedures.NewCatalogue([]procedures.Tool{
		{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true},
		{Name: "kill_job", ExternalAccess: true}, {Name: "fetch_url", ReadOnly: true, ExternalAccess: true},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return cat
}

// fixedDecision is Decision with the id n: the same operation in two
// stores writes the same record.
func fixedDecision(kind audit.DecisionKind, name, hash string, n int) audit.Decision {
	d := Decision(kind, name, hash, At(n))
	d.ID = fmt.Sprintf("pgd_%032x", n)
	return d
}

// mergeTurnAndPolicy stores a pending turn and a session policy of
// session sess at time n (when s keeps turns).
func mergeTurnAndPolicy(tb testing.TB, s procedures.Store, sess string, n int) {
	tb.Helper()
	ts, ok := s.(gate.TurnStore)
	if !ok {
		return
	}
	ctx := context.Background()
	r := gate.TurnRecord{Turn: gate.Turn{ID: "turn_" + sess, SessionID: sess, Phase: audit.PhaseInteractive,
		CodeHash: HashOf([]string{"kill_job"}, "hx"), Signature: []string{"kill_job"}, StateChangingTools: []string{"kill_job"}, Summary: "kill",
		Status: gate.TurnPending, RequestedBy: "agent", RequestedAt: At(n), Deadline: At(n + 5000)},
		Code: CodeOf([]string{"kill_job"}, "hx"), Dialect: "starlark"}
	if err := ts.CreateApproval(ctx, r, gate.PendingBounds{Total: 10}, At(n)); err != nil {
		tb.Fatalf("CreateApproval: %v", err)
	}
	p := gate.SessionPolicy{SessionID: sess, CodeHash: r.CodeHash, Policy: gate.ChoiceAutoRun, Summary: "s", SetBy: "carol", SetAt: At(n + 1), RequestedBy: "agent"}
	if err := ts.PutPolicy(ctx, p, fixedDecision(audit.KindInvoke, "", r.CodeHash, n+1)); err != nil {
		tb.Fatalf("PutPolicy: %v", err)
	}
}

// The procedures of the merge scenarios.
var (
	mergeJobs   = []string{"get_jobs", "get_logs"}
	mergeKill   = []string{"get_jobs", "kill_job"}
	mergeFetch  = []string{"fetch_url"}
	mergeNested = []string{NameOf("fetch_url")}
	mergeLogs   = []string{"get_logs"}
	mergeKillOn = []string{"kill_job"}
)

// MergeTarget fills s with the history the merge suite merges a dump into
// (times 1-49): procedures with a failed current version, a use, a grant,
// a cause without description, a decision, a turn and a policy.
func MergeTarget(tb testing.TB, s procedures.Store) {
	tb.Helper()
	ctx := context.Background()
	MustPutCatalogue(tb, s, mergeCatalogue(tb))
	MustCapture(tb, s, WithCause(Real(mergeJobs, "h1", "k1", At(1)), "slow job", ""))
	MustCapture(tb, s, Real(mergeJobs, "h1", "k2", At(2)))
	kill := Failed(Real(mergeKill, "hf", "k3", At(3)))
	kill.Version.Summary = "kill it"
	MustCapture(tb, s, kill)
	MustCapture(tb, s, WithCause(Real(mergeFetch, "h3", "k4", At(4)), "net", "network"))
	h3 := HashOf(mergeFetch, "h3")
	MustRecordUse(tb, s, procedures.UseInput{Name: NameOf(mergeFetch...), UsageKey: "u1", Replay: true, At: At(5),
		Run: &health.Run{Duration: 5 * time.Millisecond, At: At(5)}})
	g := &procedures.Grant{Enabled: true, GrantedBy: "alice", GrantedAt: At(6), Reason: "safe"}
	if _, err := s.SetGrant(ctx, NameOf(mergeFetch...), g, h3, nil, fixedDecision(audit.KindGrant, NameOf(mergeFetch...), h3, 6)); err != nil {
		tb.Fatalf("SetGrant: %v", err)
	}
	if err := s.AppendDecision(ctx, fixedDecision(audit.KindInvoke, NameOf(mergeJobs...), HashOf(mergeJobs, "h1"), 7)); err != nil {
		tb.Fatalf("AppendDecision: %v", err)
	}
	mergeTurnAndPolicy(tb, s, "sess-b", 8)
}

// MergeSource fills s with the history the merge suite exports and merges
// (times 100 on): a usage key the target counted already, a new version
// and a summary of a procedure the target holds, a succeeded version of the
// target's failed one, a procedure calling one only the target holds, new
// procedures with a grant, uses and a retirement, a cause description the
// target lacks, decisions, a turn and a policy.
func MergeSource(tb testing.TB, s procedures.Store) {
	tb.Helper()
	ctx := context.Background()
	MustPutCatalogue(tb, s, mergeCatalogue(tb))
	MustCapture(tb, s, WithCause(Real(mergeJobs, "h1", "k2", At(100)), "slow job", "a job is slow"))
	jobs := Real(mergeJobs, "h1b", "k5", At(101))
	jobs.Version.Summary = "jobs and logs"
	MustCapture(tb, s, jobs)
	MustCapture(tb, s, Real(mergeKill, "hs", "k6", At(102)))
	MustCapture(tb, s, Failed(Real(mergeKill, "hf", "k3", At(103))))
	MustCapture(tb, s, Real(mergeNested, "hn", "k7", At(104)))
	MustCapture(tb, s, WithCause(Real(mergeLogs, "h5", "k8", At(105)), "new cause", "fresh"))
	h5, h6 := HashOf(mergeLogs, "h5"), HashOf(mergeKillOn, "h6")
	g := &procedures.Grant{Enabled: true, GrantedBy: "bob", GrantedAt: At(106), Reason: "ok"}
	if _, err := s.SetGrant(ctx, NameOf(mergeLogs...), g, h5, nil, fixedDecision(audit.KindGrant, NameOf(mergeLogs...), h5, 106)); err != nil {
		tb.Fatalf("SetGrant: %v", err)
	}
	for i, k := range []string{"u2", "u2", "u3"} {
		MustRecordUse(tb, s, procedures.UseInput{Name: NameOf(mergeLogs...), UsageKey: k, Cause: "new cause", Replay: true, At: At(107 + i),
			Run: &health.Run{Duration: time.Duration(i) * time.Second, At: At(107 + i)}})
	}
	MustCapture(tb, s, Real(mergeKillOn, "h6", "k9", At(110)))
	r := &procedures.Retirement{RetiredBy: "bob", RetiredAt: At(111), Reason: "old"}
	if _, err := s.SetRetired(ctx, NameOf(mergeKillOn...), r, fixedDecision(audit.KindRetire, NameOf(mergeKillOn...), h6, 111)); err != nil {
		tb.Fatalf("SetRetired: %v", err)
	}
	if err := s.AppendDecision(ctx, fixedDecision(audit.KindInvoke, NameOf(mergeJobs...), HashOf(mergeJobs, "h1b"), 112)); err != nil {
		tb.Fatalf("AppendDecision: %v", err)
	}
	mergeTurnAndPolicy(tb, s, "sess-a", 113)
}

// Merge merges dump into s in batches of batch records.
func Merge(s procedures.Store, data []byte, batch int) (dump.ImportSummary, error) {
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return dump.Import(context.Background(), s.(dump.Store), open, trusted(dump.ImportOptions{BatchSize: batch, Merge: true}))
}

// MustMerge merges dump into s.
func MustMerge(tb testing.TB, s procedures.Store, data []byte, batch int) dump.ImportSummary {
	tb.Helper()
	sum, err := Merge(s, data, batch)
	if err != nil {
		tb.Fatalf("Merge: %v", err)
	}
	return sum
}

// requireSameStore fails when a and b differ in any record of their dumps
// or any read.
func requireSameStore(t *testing.T, what string, a, b procedures.Store) {
	t.Helper()
	b1, b2 := DumpBody(MustDump(t, a, "a")), DumpBody(MustDump(t, b, "b"))
	if len(b1) != len(b2) {
		t.Errorf("%s: dumps hold %d and %d records", what, len(b1), len(b2))
	}
	for i := range min(len(b1), len(b2)) {
		if b1[i] != b2[i] {
			t.Errorf("%s: record %d differs:\n  want %s\n  got  %s", what, i+1, b1[i], b2[i])
		}
	}
	if ra, rb := Reads(t, a), Reads(t, b); ra != rb {
		t.Errorf("%s: reads differ:\n--- want\n%s\n--- got\n%s", what, ra, rb)
	}
	if c, ok := b.(interface{ Check(context.Context) error }); ok {
		if err := c.Check(context.Background()); err != nil {
			t.Errorf("%s: the store fails its check: %v", what, err)
		}
	}
	if m, err := b.(dump.Store).LoadState(context.Background()); err != nil || m != nil {
		t.Errorf("%s: LoadState = %v, %v; want none", what, m, err)
	}
}

// RunDumpMerge is the merge suite (docs/dumps.md "Merging"): a dump of a store
// from from (MergeSource) merged into a store from to (MergeTarget) equals,
// record for record and read for read, a store from ref that saw the
// target's history and then the source's; merging again, or merging a
// dump whose history the store holds already, changes nothing; merging
// into an empty store is importing. ref must not share a database with
// from or to.
func RunDumpMerge(t *testing.T, from, to, ref NewStore) {
	t.Run("equals one store that saw both", func(t *testing.T) {
		want := ref(t)
		MergeTarget(t, want)
		MergeSource(t, want)
		src := from(t)
		MergeSource(t, src)
		data := MustDump(t, src, "src")
		dst := to(t)
		MergeTarget(t, dst)
		own := MustDump(t, dst, "dst")
		sum := MustMerge(t, dst, data, 5)
		if !sum.Merged || sum.CatalogueKept || sum.Applied[dump.TypeProcedure] != 5 {
			t.Errorf("merge summary %+v, want 5 procedures merged and the same catalogue", sum)
		}
		requireSameStore(t, "after the merge", want, dst)
		MustMerge(t, dst, data, 3)
		requireSameStore(t, "after merging the same dump again", want, dst)
		MustMerge(t, dst, own, 4)
		requireSameStore(t, "after merging the target's own earlier dump", want, dst)
		MustMerge(t, dst, MustDump(t, want, "want"), 1000)
		requireSameStore(t, "after merging the reference's dump", want, dst)
	})
	t.Run("into an empty store is an import", func(t *testing.T) {
		src := from(t)
		MergeSource(t, src)
		data := MustDump(t, src, "src")
		dst := to(t)
		MustMerge(t, dst, data, 7)
		if ra, rb := Reads(t, src), Reads(t, dst); ra != rb {
			t.Errorf("reads differ:\n--- source\n%s\n--- merged into empty\n%s", ra, rb)
		}
	})
	t.Run("the target's state is kept", func(t *testing.T) { testMergeKeeps(t, from, to) })
	t.Run("refusals", func(t *testing.T) { testMergeRefusals(t, from, to) })
}

// testMergeKeeps: for a procedure both hold, the target's current version,
// grant and retirement are kept; so are its catalogue (reported), its
// turns and policies.
func testMergeKeeps(t *testing.T, from, to NewStore) {
	ctx := context.Background()
	name := NameOf(mergeJobs...)
	src := from(t)
	cat, err := procedures.NewCatalogue(append(mergeCatalogue(t).Tools, procedures.Tool{Name: "extra", ReadOnly: true}))
	if err != nil {
		t.Fatal(err)
	}
	MustPutCatalogue(t, src, cat)
	MustCapture(t, src, Real(mergeJobs, "h1", "k1", At(100)))
	MustCapture(t, src, Real(mergeJobs, "h2", "k2", At(101)))
	h1, h2 := HashOf(mergeJobs, "h1"), HashOf(mergeJobs, "h2")
	if _, err := src.Promote(ctx, name, h2, fixedDecision(audit.KindPromote, name, h2, 102)); err != nil {
		t.Fatalf("Promote: %v", err)
	}
	g := &procedures.Grant{Enabled: true, GrantedBy: "mallory", GrantedAt: At(103), Reason: "r"}
	if _, err := src.SetGrant(ctx, name, g, h2, nil, fixedDecision(audit.KindGrant, name, h2, 103)); err != nil {
		t.Fatalf("SetGrant: %v", err)
	}
	if _, err := src.SetRetired(ctx, name, &procedures.Retirement{RetiredBy: "m", RetiredAt: At(104)}, fixedDecision(audit.KindRetire, name, h2, 104)); err != nil {
		t.Fatalf("SetRetired: %v", err)
	}
	mergeTurnAndPolicy(t, src, "sess-b", 200) // same turn id and policy key as the target's, other times
	// Health: h1 ran twice in the source, h2 three times; in the target h1
	// ran three times, h2 once. A merge keeps the health of more runs.
	for i, hash := range []string{h1, h1, h2, h2, h2} {
		MustRecordUse(t, src, procedures.UseInput{Name: name, CodeHash: hash, UsageKey: "r", At: At(105 + i),
			Run: &health.Run{Failure: health.FailureTimeout, Duration: time.Second, At: At(105 + i)}})
	}
	data := MustDump(t, src, "src")

	dst := to(t)
	MergeTarget(t, dst)
	MustCapture(t, dst, Real(mergeJobs, "h2", "k2", At(39)))
	for i, hash := range []string{h1, h1, h1, h2} {
		MustRecordUse(t, dst, procedures.UseInput{Name: name, CodeHash: hash, UsageKey: "k1", At: At(40 + i),
			Run: &health.Run{Duration: time.Millisecond, At: At(40 + i)}})
	}
	sum := MustMerge(t, dst, data, 3)
	if !sum.CatalogueKept || sum.TargetRevision != mergeCatalogue(t).Revision || sum.DumpRevision != cat.Revision {
		t.Errorf("summary %+v: want the target's catalogue reported kept", sum)
	}
	if got, _ := dst.Catalogue(ctx); got.Revision != mergeCatalogue(t).Revision {
		t.Errorf("catalogue after the merge is %s, want the target's", got.Revision)
	}
	p := MustGet(t, dst, name)
	if p.CodeHash != h1 || p.Grant != nil || p.Retired != nil {
		t.Errorf("merged %s: current %s, grant %v, retired %v; want the target's %s, none, none", name, p.CodeHash, p.Grant, p.Retired, h1)
	}
	if p.Frequency != 2 {
		t.Errorf("merged %s: frequency %d, want 2 (keys k1, k2)", name, p.Frequency)
	}
	if h := p.Health; h.Runs != 3 || h.Succeeded != 3 {
		t.Errorf("merged %s: h1's health %+v, want the target's 3 successes (more runs than the dump's 2)", name, h)
	}
	if v := MustVersion(t, dst, name, h2); v.Health.Runs != 3 || v.Health.Failures[health.FailureTimeout] != 3 {
		t.Errorf("merged %s: h2's health %+v, want the dump's three timeouts (more runs than the target's one)", name, v.Health)
	}
	if ts, ok := dst.(gate.TurnStore); ok {
		turn, err := ts.GetApproval(ctx, "turn_sess-b")
		if err != nil || !turn.RequestedAt.Equal(Ms(At(8))) {
			t.Errorf("turn after the merge: %+v, %v; want the target's (requested at %v)", turn, err, At(8))
		}
		ps, err := ts.Policies(ctx, "sess-b")
		if err != nil || len(ps) != 1 || !ps[0].SetAt.Equal(Ms(At(9))) {
			t.Errorf("policies after the merge: %+v, %v; want the target's", ps, err)
		}
	}
}

// testMergeRefusals: a procedure stored under another signature refuses
// the merge naming the dump's line; bad dumps are refused naming theirs;
// either way the target is as it was, with no marker (as it is after
// merging an empty store's dump, whose catalogue it does not take).
func testMergeRefusals(t *testing.T, from, to NewStore) {
	src := from(t)
	MustPutCatalogue(t, src, mergeCatalogue(t))
	// Before the clash in dump order: a cause, a procedure, its keys.
	MustCapture(t, src, WithCause(Real([]string{"fetch_url", "get_jobs"}, "ha", "ka", At(140)), "a cause", "d"))
	clash := Real([]string{"get_logs", "kill_job"}, "hc", "kc", At(150))
	clash.Name = NameOf(mergeJobs...) // the target's name, another signature
	MustCapture(t, src, clash)
	MustCapture(t, src, Real(mergeLogs, "h5", "k8", At(151)))
	data := MustDump(t, src, "src")
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	clashLine := 0
	for i, l := range lines {
		if strings.HasPrefix(l, `{"type":"procedure","data":{"name":"`+clash.Name+`"`) {
			clashLine = i + 1
		}
	}
	ok := MustDump(t, from(t), "empty")
	half := len(data) / 2
	cases := []struct {
		name string
		dump []byte
		code fault.Code
		want string
	}{
		{"another signature", data, fault.CodeConflict, fmt.Sprintf("line %d: procedure %s is stored with another signature", clashLine, clash.Name)},
		{"truncated", data[:half], fault.CodeInvalid, "truncated"},
		{"checksum", []byte(strings.Replace(string(data), `"description":"d"`, `"description":"D"`, 1)), fault.CodeInvalid, "checksum"},
		{"not a dump", []byte("{}\n"), fault.CodeInvalid, "line 1"},
		{"valid, empty", ok, "", ""},
	}
	dst := to(t)
	MergeTarget(t, dst)
	before := MustDump(t, dst, "dst")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(dst, c.dump, 2)
			if c.code == "" && err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if c.code != "" {
				if e := RequireCode(t, err, c.code); !strings.Contains(e.Error(), c.want) {
					t.Errorf("error %q does not say %q", e.Error(), c.want)
				}
			}
			if b1, b2 := DumpBody(before), DumpBody(MustDump(t, dst, "dst")); strings.Join(b1, "\n") != strings.Join(b2, "\n") {
				t.Errorf("the target changed after a refused merge")
			}
			if m, err := dst.(dump.Store).LoadState(context.Background()); err != nil || m != nil {
				t.Errorf("after a refused merge LoadState = %v, %v", m, err)
			}
		})
	}
}
