package storetest

import (
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// driftTools is a catalogue of sigAB's tools and one more; change edits it.
func driftTools(change func(a, b *procedures.Tool)) []procedures.Tool {
	a := procedures.Tool{Name: "tool_a", Description: "A", ReadOnly: true,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}
	b := procedures.Tool{Name: "tool_b", Description: "B", OutputSchema: map[string]any{"type": "object"}}
	if change != nil {
		change(&a, &b)
	}
	return []procedures.Tool{a, b, {Name: "tool_c"}}
}

func putDriftTools(tb testing.TB, s procedures.Store, tools []procedures.Tool) *procedures.Catalogue {
	tb.Helper()
	c, err := procedures.NewCatalogue(tools)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.PutCatalogue(ctx, c); err != nil {
		tb.Fatalf("PutCatalogue: %v", err)
	}
	return c
}

func mustDrifted(tb testing.TB, s procedures.Store, limit, offset int) ([]procedures.StaleVersion, int) {
	tb.Helper()
	vs, total, err := s.Drifted(ctx, limit, offset)
	if err != nil {
		tb.Fatalf("Drifted: %v", err)
	}
	return vs, total
}

func staleNames(vs []procedures.StaleVersion) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Procedure + "@" + v.CodeHash
		if v.Current {
			out[i] += "*"
		}
	}
	return out
}

// testDrift: a version keeps its tools' contracts as of its capture
// (Version.Baseline, the current version's on Procedure.Baseline); a
// catalogue change that changes one makes it stale (Drifted, DriftOf names
// the change), a description change does not; Rebaseline clears it, with
// its decision in the same transaction, refuses an accept of a version
// that is not stale or unknown, and changes nothing when the catalogue is
// no longer the revision the caller saw.
func testDrift(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)

	t.Run("capture keeps the contracts", func(t *testing.T) {
		s := newStore(t)
		cat := putDriftTools(t, s, driftTools(nil))
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		want := procedures.BaselineOf(sigAB, cat)
		requireEqual(t, "version baseline", MustVersion(t, s, name, "h1").Baseline, want)
		requireEqual(t, "procedure baseline", MustGet(t, s, name).Baseline, want)
		vs, err := s.Versions(ctx, name)
		if err != nil || len(vs) != 1 {
			t.Fatalf("Versions = %v, %v", vs, err)
		}
		requireEqual(t, "listed baseline", vs[0].Baseline, want)
		if got, total := mustDrifted(t, s, 0, 0); len(got) != 0 || total != 0 {
			t.Fatalf("Drifted = %v (%d), want none", staleNames(got), total)
		}
	})

	t.Run("a catalogue change makes stale, a description change does not", func(t *testing.T) {
		s := newStore(t)
		old := putDriftTools(t, s, driftTools(nil))
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		putDriftTools(t, s, driftTools(func(a, b *procedures.Tool) { a.Description, b.Description = "new words", "more" }))
		if got, total := mustDrifted(t, s, 0, 0); len(got) != 0 || total != 0 {
			t.Fatalf("after a description change Drifted = %v, want none", staleNames(got))
		}
		cat := putDriftTools(t, s, driftTools(func(a, b *procedures.Tool) {
			a.InputSchema = map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}
			b.ReadOnly = true
		}))
		got, total := mustDrifted(t, s, 0, 0)
		requireEqual(t, "stale", staleNames(got), []string{name + "@h1*"})
		if total != 1 {
			t.Fatalf("total = %d", total)
		}
		requireEqual(t, "stale baseline", got[0].Baseline, procedures.BaselineOf(sigAB, old))
		requireEqual(t, "drift", procedures.DriftOf(got[0].Baseline, cat), []procedures.Drift{
			{Tool: "tool_a", Change: procedures.DriftInputSchema, Changes: []procedures.SchemaChange{
				{Path: "/properties/id/type", Change: procedures.SchemaChanged, Was: `"integer"`, Now: `"string"`}}},
			{Tool: "tool_b", Change: procedures.DriftReadOnly}})
		requireEqual(t, "procedure drift", procedures.DriftOf(MustGet(t, s, name).Baseline, cat), procedures.DriftOf(got[0].Baseline, cat))
		if got[0].Verification != nil {
			t.Fatalf("a version never verified is listed with %+v", got[0].Verification)
		}
		ver := recording.Verification{Status: "failed", At: At(5).UTC().Truncate(time.Millisecond), CatalogueRevision: cat.Revision, Recordings: 2, Passed: 1}
		if err := s.SetVerification(ctx, name, "h1", ver); err != nil {
			t.Fatal(err)
		}
		got, _ = mustDrifted(t, s, 0, 0)
		if len(got) != 1 || got[0].Verification == nil {
			t.Fatalf("Drifted after a verification = %+v", got)
		}
		requireEqual(t, "listed verification", *got[0].Verification, ver)
	})

	t.Run("a removed tool and an output schema", func(t *testing.T) {
		s := newStore(t)
		putDriftTools(t, s, driftTools(nil))
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		cat := putDriftTools(t, s, []procedures.Tool{driftTools(nil)[0], {Name: "tool_c"}})
		got, _ := mustDrifted(t, s, 0, 0)
		if len(got) != 1 {
			t.Fatalf("Drifted = %v", staleNames(got))
		}
		requireEqual(t, "drift", procedures.DriftOf(got[0].Baseline, cat), []procedures.Drift{{Tool: "tool_b", Change: procedures.DriftRemoved}})
		cat = putDriftTools(t, s, driftTools(func(_, b *procedures.Tool) { b.OutputSchema = map[string]any{"type": "array"} }))
		got, _ = mustDrifted(t, s, 0, 0)
		if len(got) != 1 {
			t.Fatalf("Drifted = %v", staleNames(got))
		}
		requireEqual(t, "drift", procedures.DriftOf(got[0].Baseline, cat), []procedures.Drift{{Tool: "tool_b", Change: procedures.DriftOutputSchema,
			Changes: []procedures.SchemaChange{{Path: "/type", Change: procedures.SchemaChanged, Was: `"object"`, Now: `"array"`}}}})
	})

	t.Run("order and pages", func(t *testing.T) {
		s := newStore(t)
		putDriftTools(t, s, driftTools(nil))
		sigAC := []string{"tool_a", "tool_c"}
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		MustCapture(t, s, In(sigAC, "h3", "k3", At(2)))
		MustCapture(t, s, In([]string{"tool_c"}, "h4", "k4", At(3)))
		putDriftTools(t, s, driftTools(func(a, _ *procedures.Tool) { a.ExternalAccess = true }))
		nameAC := NameOf(sigAC...)
		all, total := mustDrifted(t, s, 0, 0)
		requireEqual(t, "all", staleNames(all), []string{name + "@h1*", nameAC + "@h3*", name + "@h2"})
		if total != 3 {
			t.Fatalf("total = %d", total)
		}
		page, total := mustDrifted(t, s, 1, 1)
		requireEqual(t, "page", staleNames(page), []string{nameAC + "@h3*"})
		if total != 3 {
			t.Fatalf("page total = %d", total)
		}
		if page, _ := mustDrifted(t, s, 5, 3); len(page) != 0 {
			t.Fatalf("past the end = %v", staleNames(page))
		}
	})

	t.Run("rebaseline accepts, once", func(t *testing.T) {
		s := newStore(t)
		putDriftTools(t, s, driftTools(nil))
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		cat := putDriftTools(t, s, driftTools(func(_, b *procedures.Tool) { b.ExternalAccess = true }))
		d := Decision(audit.KindDrift, name, "h1", At(5))
		v, err := s.Rebaseline(ctx, procedures.RebaselineInput{Name: name, CodeHash: "h1", Decision: &d})
		if err != nil {
			t.Fatalf("Rebaseline: %v", err)
		}
		requireEqual(t, "new baseline", v.Baseline, procedures.BaselineOf(sigAB, cat))
		if !v.Current || v.CodeHash != "h1" {
			t.Fatalf("Rebaseline returned %+v", v)
		}
		if got, _ := mustDrifted(t, s, 0, 0); len(got) != 0 {
			t.Fatalf("after accept Drifted = %v", staleNames(got))
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindDrift}); len(ds) != 1 || ds[0].ID != d.ID {
			t.Fatalf("drift decisions = %+v", ds)
		}
		again := Decision(audit.KindDrift, name, "h1", At(6))
		_, err = s.Rebaseline(ctx, procedures.RebaselineInput{Name: name, CodeHash: "h1", Decision: &again})
		if fe := RequireCode(t, err, fault.CodeConflict); fe.Details["reason"] != procedures.ReasonNotStale {
			t.Fatalf("accept of a version not stale: %v", fe)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindDrift}); len(ds) != 1 {
			t.Fatalf("a refused accept left a decision: %+v", ds)
		}
		_, err = s.Rebaseline(ctx, procedures.RebaselineInput{Name: name, CodeHash: "nope", Decision: &again})
		RequireCode(t, err, fault.CodeNotFound)
		_, err = s.Rebaseline(ctx, procedures.RebaselineInput{Name: NameOf("tool_x"), CodeHash: "h1", Decision: &again})
		RequireCode(t, err, fault.CodeNotFound)
	})

	t.Run("rebaseline after a run waits for the same catalogue", func(t *testing.T) {
		s := newStore(t)
		putDriftTools(t, s, driftTools(nil))
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		seen := putDriftTools(t, s, driftTools(func(a, _ *procedures.Tool) { a.ReadOnly = false }))
		putDriftTools(t, s, driftTools(func(a, _ *procedures.Tool) { a.ReadOnly = false; a.ExternalAccess = true }))
		if _, err := s.Rebaseline(ctx, procedures.RebaselineInput{Name: name, CodeHash: "h1", Revision: seen.Revision}); err != nil {
			t.Fatalf("Rebaseline: %v", err)
		}
		if got, _ := mustDrifted(t, s, 0, 0); len(got) != 1 {
			t.Fatalf("a run under an older catalogue cleared the drift: %v", staleNames(got))
		}
		now, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Rebaseline(ctx, procedures.RebaselineInput{Name: name, CodeHash: "h1", Revision: now.Revision}); err != nil {
			t.Fatalf("Rebaseline: %v", err)
		}
		if got, _ := mustDrifted(t, s, 0, 0); len(got) != 0 {
			t.Fatalf("a run under the current catalogue left the drift: %v", staleNames(got))
		}
	})
}

// DriftUpgradeCatalogue puts the catalogue the upgrade tests start from
// and captures, in batchSize-independent numbers, procedures of sigAB in
// versions h0…h(n-1), returning the catalogue.
func DriftUpgradeCatalogue(tb testing.TB, s procedures.Store, n int) *procedures.Catalogue {
	tb.Helper()
	cat := putDriftTools(tb, s, driftTools(nil))
	for i := range n {
		MustCapture(tb, s, In(sigAB, "h"+string(rune('a'+i)), "k", At(i)))
	}
	return cat
}

// RequireBaselines fails tb unless every one of the n versions
// DriftUpgradeCatalogue captured has cat's contracts as its baseline.
func RequireBaselines(tb testing.TB, s procedures.Store, n int, cat *procedures.Catalogue, what string) {
	tb.Helper()
	want := procedures.BaselineOf(sigAB, cat)
	for i := range n {
		requireEqual(tb, what+" baseline", MustVersion(tb, s, NameOf(sigAB...), "h"+string(rune('a'+i))).Baseline, want)
	}
}

// DriftedCatalogue is the catalogue DriftUpgradeCatalogue's with tool_a's
// read_only flipped: every version captured under the first is stale under it.
func DriftedCatalogue(tb testing.TB, s procedures.Store) *procedures.Catalogue {
	tb.Helper()
	return putDriftTools(tb, s, driftTools(func(a, _ *procedures.Tool) { a.ReadOnly = !a.ReadOnly }))
}
