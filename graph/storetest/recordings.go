package storetest

import (
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// MustRecording is recording.NewRecording of a run of name's version hash
// with task id task, whose tool answered answer, at at.
func MustRecording(tb testing.TB, name, hash string, task int, answer string, at time.Time) *recording.Recording {
	tb.Helper()
	calls := []recording.RecordedCall{{Tool: "tool_a", Arguments: map[string]any{"task_id": task}, Response: map[string]any{"answer": answer}}}
	r, err := recording.NewRecording(name, hash, map[string]any{"task_id": task}, calls, answer, at)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// testRecordings: a successful run (a replay, or a turn's run that counts
// in the health only) keeps its recording in its use's transaction (docs/design.md "Verification against recorded tool
// responses"): one per version and argument set, replaced by a run that
// recorded something else, untouched by one that recorded the same, the
// version's newest kept; bad recordings are refused and change nothing;
// recordings are deleted per procedure or all at once, with their
// decision.
func testRecordings(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)
	replay := func(r *recording.Recording, keep int) procedures.UseInput {
		return procedures.UseInput{Name: name, CodeHash: r.CodeHash, UsageKey: "k", Replay: true, At: r.RecordedAt,
			Run: &health.Run{Duration: time.Millisecond, At: r.RecordedAt}, Recording: r, KeepRecordings: keep}
	}
	setup := func(t *testing.T) procedures.Store {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		return s
	}

	t.Run("kept, replaced, bounded", func(t *testing.T) {
		s := setup(t)
		if rs, _, err := s.Recordings(ctx, name, "", 0, 0); err != nil || len(rs) != 0 {
			t.Fatalf("Recordings before any = %v, %v; want none", rs, err)
		}
		first := MustRecording(t, name, "h1", 1, "a", At(1))
		MustRecordUse(t, s, replay(first, 3))
		rs, _, err := s.Recordings(ctx, name, "", 0, 0)
		if err != nil || len(rs) != 1 {
			t.Fatalf("Recordings = %v, %v; want one", rs, err)
		}
		got := rs[0]
		if got.ID != first.ID || got.CodeHash != "h1" || got.Procedure != name || got.ResultHash != first.ResultHash ||
			got.ContentHash != first.ContentHash || got.Bytes != first.Bytes || len(got.Calls) != 1 || got.Calls[0].Tool != "tool_a" {
			t.Fatalf("recording read back as %+v, want %+v", got, first)
		}
		requireEqual(t, "arguments", JSONValue(t, got.Arguments), JSONValue(t, first.Arguments))
		requireEqual(t, "calls", JSONValue(t, got.Calls), JSONValue(t, first.Calls))
		RequireTime(t, "recorded_at", got.RecordedAt, At(1))

		MustRecordUse(t, s, replay(MustRecording(t, name, "h1", 1, "a", At(2)), 3))
		if rs := mustRecordings(t, s, name); len(rs) != 1 || !rs[0].RecordedAt.Equal(Ms(At(1))) {
			t.Errorf("the same content again rewrote the recording: %+v", rs)
		}
		changed := MustRecording(t, name, "h1", 1, "b", At(3))
		MustRecordUse(t, s, replay(changed, 3))
		if rs := mustRecordings(t, s, name); len(rs) != 1 || rs[0].ContentHash != changed.ContentHash || !rs[0].RecordedAt.Equal(Ms(At(3))) {
			t.Errorf("a run that recorded something else for the same arguments: %+v, want it replaced", rs)
		}
		for task := 2; task <= 4; task++ {
			MustRecordUse(t, s, replay(MustRecording(t, name, "h1", task, "a", At(3+task)), 3))
		}
		rs = mustRecordings(t, s, name)
		if len(rs) != 3 {
			t.Fatalf("%d recordings kept, want the 3 newest", len(rs))
		}
		for i, task := range []int{4, 3, 2} {
			if rs[i].Arguments["task_id"] != float64(task) && rs[i].Arguments["task_id"] != int64(task) {
				t.Errorf("recording %d is of task %v, want %d (newest first)", i, rs[i].Arguments["task_id"], task)
			}
		}
	})

	t.Run("a successful run that is not a replay", func(t *testing.T) {
		// A turn's run of a version's code counts in its health only, and
		// keeps its recording in the same write.
		s := setup(t)
		r := MustRecording(t, name, "h1", 1, "a", At(1))
		in := replay(r, 3)
		in.Replay = false
		MustRecordUse(t, s, in)
		if rs := mustRecordings(t, s, name); len(rs) != 1 || rs[0].ID != r.ID {
			t.Fatalf("recordings = %+v; want the run's", rs)
		}
		if p := MustGet(t, s, name); p.Health.Runs != 1 || p.UseCount != 0 {
			t.Errorf("the run counted %d runs, use count %d; want 1 run and no use", p.Health.Runs, p.UseCount)
		}
	})

	t.Run("per version", func(t *testing.T) {
		s := setup(t)
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		MustRecordUse(t, s, replay(MustRecording(t, name, "h1", 1, "a", At(2)), 1))
		MustRecordUse(t, s, replay(MustRecording(t, name, "h2", 1, "a", At(3)), 1))
		rs := mustRecordings(t, s, name)
		if len(rs) != 2 || rs[0].CodeHash != "h2" || rs[1].CodeHash != "h1" {
			t.Fatalf("recordings = %+v; want one per version, h2's first", rs)
		}
		for _, h := range []string{"h1", "h2"} {
			if rs, _, err := s.Recordings(ctx, name, h, 0, 0); err != nil || len(rs) != 1 || rs[0].CodeHash != h {
				t.Errorf("Recordings(%s) = %+v, %v; want its own only", h, rs, err)
			}
		}
		if rs, _, err := s.Recordings(ctx, name, "h3", 0, 0); err != nil || len(rs) != 0 {
			t.Errorf("Recordings of a version without any = %+v, %v", rs, err)
		}
	})

	t.Run("pages", func(t *testing.T) {
		s := setup(t)
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		var ids []string // newest first
		for i, h := range []string{"h1", "h2", "h1", "h2"} {
			r := MustRecording(t, name, h, i+1, "a", At(2+i))
			MustRecordUse(t, s, replay(r, 3))
			ids = append([]string{r.ID}, ids...)
		}
		page := func(hash string, limit, offset int) ([]string, int) {
			t.Helper()
			rs, total, err := s.Recordings(ctx, name, hash, limit, offset)
			if err != nil {
				t.Fatalf("Recordings(%q, %d, %d): %v", hash, limit, offset, err)
			}
			out := []string{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out, total
		}
		for _, tc := range []struct {
			name          string
			hash          string
			limit, offset int
			want          []string
			total         int
		}{
			{"all", "", 0, 0, ids, 4},
			{"the first", "", 1, 0, ids[:1], 4},
			{"the middle", "", 2, 1, ids[1:3], 4},
			{"past the end", "", 2, 4, []string{}, 4},
			{"one version", "h1", 0, 0, []string{ids[1], ids[3]}, 2},
			{"one version's second", "h1", 1, 1, []string{ids[3]}, 2},
		} {
			got, total := page(tc.hash, tc.limit, tc.offset)
			requireEqual(t, tc.name, got, tc.want)
			if total != tc.total {
				t.Errorf("%s: total %d, want %d", tc.name, total, tc.total)
			}
		}
		for _, lo := range [][2]int{{-1, 0}, {0, -1}} {
			_, _, err := s.Recordings(ctx, name, "", lo[0], lo[1])
			RequireCode(t, err, fault.CodeInvalid)
		}
	})

	t.Run("bad recordings are refused and change nothing", func(t *testing.T) {
		s := setup(t)
		good := MustRecording(t, name, "h1", 1, "a", At(1))
		for _, tc := range []struct {
			name string
			edit func(in *procedures.UseInput)
		}{
			{"with a failed run", func(in *procedures.UseInput) {
				in.Replay, in.Run = false, &health.Run{Failure: health.FailureToolError, At: At(1)}
			}},
			{"with no run", func(in *procedures.UseInput) { in.Replay, in.Run = false, nil }},
			{"no version named", func(in *procedures.UseInput) { in.CodeHash = "" }},
			{"another version", func(in *procedures.UseInput) { in.CodeHash = "h2" }},
			{"another procedure", func(in *procedures.UseInput) { r := *good; r.Procedure = "proc__x"; in.Recording = &r }},
			{"too large", func(in *procedures.UseInput) {
				r := *good
				r.Bytes = recording.MaxRecordingBytes + 1
				in.Recording = &r
			}},
			{"no id", func(in *procedures.UseInput) { r := *good; r.ID = ""; in.Recording = &r }},
			{"keep 0", func(in *procedures.UseInput) { in.KeepRecordings = 0 }},
			{"keep too many", func(in *procedures.UseInput) { in.KeepRecordings = recording.MaxRecordingsPerVersion + 1 }},
		} {
			in := replay(good, 3)
			tc.edit(&in)
			_, err := s.RecordUse(ctx, in)
			RequireCode(t, err, fault.CodeInvalid)
		}
		if rs := mustRecordings(t, s, name); len(rs) != 0 {
			t.Errorf("refused recordings were kept: %+v", rs)
		}
		if p := MustGet(t, s, name); p.Health.Runs != 0 || p.UseCount != 0 {
			t.Errorf("refused uses counted: %d runs, use count %d", p.Health.Runs, p.UseCount)
		}
		_, _, err := s.Recordings(ctx, "proc__missing", "", 0, 0)
		RequireCode(t, err, fault.CodeNotFound)
	})

	t.Run("a version keeps its last verification", func(t *testing.T) {
		s := setup(t)
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		if p := MustGet(t, s, name); p.Verification != nil {
			t.Fatalf("a never verified version: %+v", p.Verification)
		}
		v := recording.Verification{Status: recording.VerificationFailed, At: At(5), CatalogueRevision: "r1", Recordings: 3, Passed: 2}
		if err := s.SetVerification(ctx, name, "h1", v); err != nil {
			t.Fatal(err)
		}
		v2 := recording.Verification{Status: recording.VerificationPassed, At: At(6), CatalogueRevision: "r2", Recordings: 1, Passed: 1}
		if err := s.SetVerification(ctx, name, "h2", v2); err != nil {
			t.Fatal(err)
		}
		got := MustGet(t, s, name).Verification
		if got == nil || got.Status != v.Status || got.Passed != 2 || got.Recordings != 3 || got.CatalogueRevision != "r1" {
			t.Fatalf("the current version's verification = %+v, want %+v", got, v)
		}
		RequireTime(t, "verification at", got.At, At(5))
		if h2 := MustVersion(t, s, name, "h2").Verification; h2 == nil || h2.Status != recording.VerificationPassed {
			t.Errorf("h2's verification = %+v, want passed", h2)
		}
		vs, err := s.Versions(ctx, name)
		if err != nil || len(vs) != 2 || vs[0].Verification == nil || vs[1].Verification == nil {
			t.Fatalf("Versions = %+v, %v; want both verified", vs, err)
		}
		RequireCode(t, s.SetVerification(ctx, name, "nope", v), fault.CodeNotFound)
		RequireCode(t, s.SetVerification(ctx, "proc__missing", "h1", v), fault.CodeNotFound)
		bad := v
		bad.Passed = 4
		RequireCode(t, s.SetVerification(ctx, name, "h1", bad), fault.CodeInvalid)
		bad = v
		bad.Status = "maybe"
		RequireCode(t, s.SetVerification(ctx, name, "h1", bad), fault.CodeInvalid)
		if got := MustGet(t, s, name).Verification; got.Passed != 2 {
			t.Errorf("a refused verification replaced the kept one: %+v", got)
		}
	})

	t.Run("deleted per procedure and all at once", func(t *testing.T) {
		s := setup(t)
		other := NameOf("tool_c", "tool_d")
		MustCapture(t, s, In([]string{"tool_c", "tool_d"}, "h9", "k1", At(0)))
		MustRecordUse(t, s, replay(MustRecording(t, name, "h1", 1, "a", At(1)), 3))
		MustRecordUse(t, s, replay(MustRecording(t, name, "h1", 2, "a", At(2)), 3))
		r := MustRecording(t, other, "h9", 1, "a", At(3))
		in := replay(r, 3)
		in.Name = other
		MustRecordUse(t, s, in)
		d := Decision(audit.KindRecordings, name, "", At(4))
		d.Reason = audit.ReasonRecordingsPurged
		n, err := s.DeleteRecordings(ctx, name, &d)
		if err != nil || n != 2 {
			t.Fatalf("DeleteRecordings(%s) = %d, %v; want 2", name, n, err)
		}
		if rs := mustRecordings(t, s, name); len(rs) != 0 {
			t.Errorf("left %+v", rs)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name, Kind: audit.KindRecordings}); len(ds) != 1 {
			t.Errorf("purge decisions = %+v, want one", ds)
		}
		if rs := mustRecordings(t, s, other); len(rs) != 1 {
			t.Errorf("%s lost its recording to another's purge: %+v", other, rs)
		}
		if n, err := s.DeleteRecordings(ctx, "", nil); err != nil || n != 1 {
			t.Errorf("DeleteRecordings(all) = %d, %v; want 1", n, err)
		}
		_, err = s.DeleteRecordings(ctx, "proc__missing", nil)
		RequireCode(t, err, fault.CodeNotFound)
	})
}

func mustRecordings(tb testing.TB, s procedures.Store, name string) []recording.Recording {
	tb.Helper()
	rs, _, err := s.Recordings(ctx, name, "", 0, 0)
	if err != nil {
		tb.Fatalf("Recordings(%s): %v", name, err)
	}
	return rs
}
