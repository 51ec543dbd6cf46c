package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// The versions of the baseline and recording scenarios: sigAB's h1 and h3
// captured under the first catalogue, h2 after tool_a's input schema
// changed (so h1 and h3 are stale, h2 is not).
var (
	keptH1, keptH2, keptH3 = HashOf(sigAB, "h1"), HashOf(sigAB, "h2"), HashOf(sigAB, "h3")
	keptName               = NameOf(sigAB...)
)

// changedA is driftTools with tool_a's input schema changed.
func changedA() []procedures.Tool {
	return driftTools(func(a, _ *procedures.Tool) { a.InputSchema = map[string]any{"type": "object"} })
}

// staleSource fills s with h1 and h3 captured under driftTools, then the
// catalogue changedA and h2 captured under it.
func staleSource(tb testing.TB, s procedures.Store) {
	tb.Helper()
	putDriftTools(tb, s, driftTools(nil))
	MustCapture(tb, s, Real(sigAB, "h1", "k1", At(1)))
	MustCapture(tb, s, Real(sigAB, "h3", "k3", At(2)))
	putDriftTools(tb, s, changedA())
	MustCapture(tb, s, Real(sigAB, "h2", "k2", At(3)))
}

// staleOf is each version of keptName's baseline, drift under the stored
// catalogue (procedures.DriftOf) and staleness, as JSON.
func staleOf(tb testing.TB, s procedures.Store) map[string]any {
	tb.Helper()
	cat, err := s.Catalogue(ctx)
	if err != nil {
		tb.Fatalf("Catalogue: %v", err)
	}
	out := map[string]any{}
	for _, h := range []string{keptH1, keptH2, keptH3} {
		v, err := s.Version(ctx, keptName, h)
		if fault.ErrorCode(err) == fault.CodeNotFound {
			continue
		}
		if err != nil {
			tb.Fatalf("Version: %v", err)
		}
		drift := procedures.DriftOf(v.Baseline, cat)
		out[h] = JSONValue(tb, map[string]any{"stale": len(drift) > 0, "drift": drift, "baseline": v.Baseline})
	}
	return out
}

// stripBaselines is data with every version's baseline taken out (a dump
// written before dumps carried them), resealed.
func stripBaselines(tb testing.TB, data []byte) []byte {
	tb.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	body := DumpBody(data)
	re := regexp.MustCompile(`,"baseline":\{"tools":\[[^\]]*\]\}`)
	for i, l := range body {
		body[i] = re.ReplaceAllString(l, "")
	}
	return Reseal(tb, lines[0], body)
}

// RunDumpBaselines: a version's drift baseline travels with it
// (docs/dumps.md): a version stale in the source is stale, with the same
// drift, after export and import; a dump without baselines (written before
// dumps carried them) still imports, its versions given the target's
// contracts (never stale); a merge keeps the baseline of a version the
// target holds and brings the dump's with a version it lacks.
func RunDumpBaselines(t *testing.T, from, to NewStore) {
	t.Run("a stale version stays stale", func(t *testing.T) {
		src := from(t)
		staleSource(t, src)
		want := staleOf(t, src)
		if want[keptH1].(map[string]any)["stale"] != true || want[keptH2].(map[string]any)["stale"] != false {
			t.Fatalf("the source's staleness is not the scenario's: %v", want)
		}
		wantDrifted, _ := mustDrifted(t, src, 0, 0)
		data := MustDump(t, src, "src")
		if !strings.Contains(string(data), `"baseline":{"tools":[{"tool":"tool_a"`) {
			t.Fatalf("the dump carries no baseline:\n%s", data)
		}
		dst := to(t)
		MustImport(t, dst, data, 2)
		requireEqual(t, "staleness after the import", staleOf(t, dst), want)
		got, _ := mustDrifted(t, dst, 0, 0)
		requireEqual(t, "Drifted after the import", staleNames(got), staleNames(wantDrifted))
		if b1, b2 := DumpBody(data), DumpBody(MustDump(t, dst, "dst")); strings.Join(b1, "\n") != strings.Join(b2, "\n") {
			t.Errorf("the import's dump differs from the source's:\n%s\n---\n%s", strings.Join(b1, "\n"), strings.Join(b2, "\n"))
		}
	})
	t.Run("a dump without baselines imports", func(t *testing.T) {
		src := from(t)
		staleSource(t, src)
		old := stripBaselines(t, MustDump(t, src, "src"))
		if strings.Contains(string(old), `"baseline"`) {
			t.Fatal("baselines left in the stripped dump")
		}
		dst := to(t)
		MustImport(t, dst, old, 3)
		cat, err := dst.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for h, v := range staleOf(t, dst) {
			m := v.(map[string]any)
			if m["stale"] != false {
				t.Errorf("version %s of a dump without baselines is stale: %v", h, m)
			}
			// Given the target's contracts now (embedded) or when the store
			// opens (Neo4j's backfill): none until then.
			if b := m["baseline"]; b != nil {
				requireEqual(t, "baseline of "+h, b, JSONValue(t, procedures.BaselineOf(sigAB, cat)))
			}
		}
	})
	t.Run("a merge keeps the target's baseline", func(t *testing.T) {
		src := from(t)
		staleSource(t, src)
		data := MustDump(t, src, "src")
		want := staleOf(t, src)
		dst := to(t)
		putDriftTools(t, dst, changedA())
		MustCapture(t, dst, Real(sigAB, "h1", "k9", At(0)))
		kept := staleOf(t, dst)[keptH1]
		MustMerge(t, dst, data, 2)
		got := staleOf(t, dst)
		requireEqual(t, "h1, which the target held", got[keptH1], kept)
		requireEqual(t, "h3, which the target lacked", got[keptH3], want[keptH3])
		requireEqual(t, "h2, which the target lacked", got[keptH2], want[keptH2])
		MustMerge(t, dst, data, 5)
		requireEqual(t, "after merging again", staleOf(t, dst), got)
	})
}

// recordingSource fills s with sigAB's h1 and h2 and their recordings: h1
// run with tasks 1, 2 and 3 (At(11) to At(13)), h2 with task 1 (At(14)),
// each version keeping 3.
func recordingSource(tb testing.TB, s procedures.Store) {
	tb.Helper()
	putDriftTools(tb, s, driftTools(nil))
	MustCapture(tb, s, Real(sigAB, "h1", "k1", At(1)))
	MustCapture(tb, s, Real(sigAB, "h2", "k2", At(2)))
	for i, r := range []*recording.Recording{
		MustRecording(tb, keptName, keptH1, 1, "a", At(11)), MustRecording(tb, keptName, keptH1, 2, "b", At(12)),
		MustRecording(tb, keptName, keptH1, 3, "c", At(13)), MustRecording(tb, keptName, keptH2, 1, "d", At(14)),
	} {
		recordRun(tb, s, r, i, 3)
	}
}

// recordRun records a successful replay of r's version keeping r, the
// version keeping keep.
func recordRun(tb testing.TB, s procedures.Store, r *recording.Recording, n, keep int) {
	tb.Helper()
	MustRecordUse(tb, s, procedures.UseInput{Name: r.Procedure, CodeHash: r.CodeHash, UsageKey: "r" + string(rune('a'+n)), Replay: true,
		At: r.RecordedAt, Run: &health.Run{Duration: time.Millisecond, At: r.RecordedAt}, Recording: r, KeepRecordings: keep})
}

// recordingsOf is keptName's recordings as JSON (newest first).
func recordingsOf(tb testing.TB, s procedures.Store) []any {
	tb.Helper()
	rs, _, err := s.Recordings(ctx, keptName, "", 0, 0)
	if err != nil {
		tb.Fatalf("Recordings: %v", err)
	}
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = JSONValue(tb, map[string]any{"recording": r, "content_hash": r.ContentHash})
	}
	return out
}

// tasksOf is each recording's version (1 or 2 for h1 or h2) and task,
// newest first.
func tasksOf(tb testing.TB, s procedures.Store) []string {
	tb.Helper()
	rs, _, err := s.Recordings(ctx, keptName, "", 0, 0)
	if err != nil {
		tb.Fatalf("Recordings: %v", err)
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		v := "h1"
		if r.CodeHash == keptH2 {
			v = "h2"
		}
		b, _ := json.Marshal(r.Arguments["task_id"])
		out[i] = v + ":" + string(b) + ":" + r.Calls[0].Response.(map[string]any)["answer"].(string)
	}
	return out
}

// RunDumpRecordings: a dump carries recordings only when asked
// (dump.DumpOptions.Recordings, procgraph export --with-recordings); an
// import of one keeps them as recorded, each version its newest
// ImportOptions.RecordingsPerVersion; a merge adds those the target lacks
// (by id), keeps the target's where both have one, and keeps each
// version's newest; merging again changes nothing.
func RunDumpRecordings(t *testing.T, from, to NewStore) {
	t.Run("left out unless asked", func(t *testing.T) {
		src := from(t)
		recordingSource(t, src)
		data := MustDump(t, src, "src")
		if strings.Contains(string(data), `"type":"recording"`) {
			t.Fatalf("a dump without recordings holds one")
		}
		dst := to(t)
		MustImport(t, dst, data, 3)
		if rs := recordingsOf(t, dst); len(rs) != 0 {
			t.Errorf("imported %d recordings from a dump without any", len(rs))
		}
	})
	t.Run("round trip", func(t *testing.T) {
		src := from(t)
		recordingSource(t, src)
		want := recordingsOf(t, src)
		data := MustDumpWith(t, src, "src", dump.DumpOptions{Recordings: true})
		h, tr, err := dump.Validate(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Validate: %v", err)
		}
		if h.Counts[dump.TypeRecording] != 4 || tr.Counts[dump.TypeRecording] != 4 {
			t.Errorf("header counts %v, trailer %v: want 4 recordings", h.Counts, tr.Counts)
		}
		dst := to(t)
		sum := MustImport(t, dst, data, 3)
		if sum.Applied[dump.TypeRecording] != 4 {
			t.Errorf("applied %v, want 4 recordings", sum.Applied)
		}
		requireEqual(t, "recordings after the import", recordingsOf(t, dst), want)
		b1, b2 := DumpBody(data), DumpBody(MustDumpWith(t, dst, "dst", dump.DumpOptions{Recordings: true}))
		if strings.Join(b1, "\n") != strings.Join(b2, "\n") {
			t.Errorf("the import's dump with recordings differs:\n%s\n---\n%s", strings.Join(b1, "\n"), strings.Join(b2, "\n"))
		}
	})
	t.Run("the target's bound", func(t *testing.T) {
		src := from(t)
		recordingSource(t, src)
		data := MustDumpWith(t, src, "src", dump.DumpOptions{Recordings: true})
		dst := to(t)
		open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		if _, err := dump.Import(context.Background(), dst.(dump.Store), open, trusted(dump.ImportOptions{BatchSize: 2, RecordingsPerVersion: 2})); err != nil {
			t.Fatalf("Import: %v", err)
		}
		requireEqual(t, "recordings kept with a bound of 2", tasksOf(t, dst), []string{"h2:1:d", "h1:3:c", "h1:2:b"})
		_, err := dump.Import(context.Background(), to(t).(dump.Store), open, dump.ImportOptions{RecordingsPerVersion: recording.MaxRecordingsPerVersion + 1})
		RequireCode(t, err, fault.CodeInvalid)
	})
	t.Run("merge", func(t *testing.T) {
		src := from(t)
		recordingSource(t, src)
		data := MustDumpWith(t, src, "src", dump.DumpOptions{Recordings: true})
		dst := to(t)
		putDriftTools(t, dst, driftTools(nil))
		MustCapture(t, dst, Real(sigAB, "h1", "k1", At(1)))
		// Task 1 of h1 recorded something else, later; task 4 is the target's own.
		recordRun(t, dst, MustRecording(t, keptName, keptH1, 1, "x", At(20)), 0, 3)
		recordRun(t, dst, MustRecording(t, keptName, keptH1, 4, "y", At(21)), 1, 3)
		sum := MustMerge(t, dst, data, 2)
		if sum.Applied[dump.TypeRecording] != 4 {
			t.Errorf("applied %v, want 4 recordings", sum.Applied)
		}
		want := []string{"h1:4:y", "h1:1:x", "h2:1:d", "h1:3:c"}
		requireEqual(t, "recordings after the merge", tasksOf(t, dst), want)
		MustMerge(t, dst, data, 3)
		requireEqual(t, "recordings after merging again", tasksOf(t, dst), want)
	})
}

// RunDumpRecordingRefusals: a dump whose recording is of a version the
// dump lacks, too large, malformed, or not what its id and content hash
// say is refused naming its line, and the target is left empty.
func RunDumpRecordingRefusals(t *testing.T, from, to NewStore) {
	src := from(t)
	recordingSource(t, src)
	data := MustDumpWith(t, src, "src", dump.DumpOptions{Recordings: true})
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	header, body := lines[0], DumpBody(data)
	first := -1
	for i, l := range body {
		if strings.HasPrefix(l, `{"type":"recording"`) {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no recording in the dump")
	}
	// edit is the dump with the first recording's line edited by f (text
	// replaced, so the rest of its body keeps its bytes).
	edit := func(f func(l string) string) []byte {
		b := append([]string(nil), body...)
		if b[first] = f(b[first]); b[first] == body[first] {
			t.Fatalf("the edit changed nothing in %s", body[first])
		}
		return Reseal(t, header, b)
	}
	sub := func(pattern, with string) func(string) string {
		re := regexp.MustCompile(pattern)
		return func(l string) string { return re.ReplaceAllLiteralString(l, with) }
	}
	big := strings.Repeat("x", recording.MaxRecordingBytes)
	cases := []struct {
		name string
		dump []byte
		want string
	}{
		{"of a version the dump lacks", edit(sub(`"code_hash":"[0-9a-f]{64}"`, `"code_hash":"`+keptH3+`"`)), "not a version of"},
		{"too large", edit(sub(`"response":\{"answer":"[a-z]"\}`, `"response":{"answer":"`+big+`"}`)), "more than"},
		{"body not a recording", edit(sub(`"body":\{.*\}\}$`, `"body":[1,2]}}`)), "not a recording"},
		{"body with an unknown field", edit(sub(`,"calls":`, `,"secret":"s","calls":`)), "unknown field"},
		{"arguments not an object", edit(sub(`"body":\{"arguments":\{"task_id":[0-9]+\}`, `"body":{"arguments":"a"`)), "not an object"},
		{"a call without a tool", edit(sub(`"tool":"tool_a"`, `"tool":""`)), "names no tool"},
		{"another id", edit(sub(`"id":"rec_[0-9a-f]+"`, `"id":"rec_00000000000000000000000000000000"`)), "its id"},
		{"arguments not its id's", edit(sub(`"body":\{"arguments":\{"task_id":[0-9]+\}`, `"body":{"arguments":{"task_id":99}`)), "its id"},
		{"another content hash", edit(sub(`"content_hash":"[0-9a-f]{64}"`, `"content_hash":"`+strings.Repeat("0", 64)+`"`)), "content hash"},
		{"an answer changed", edit(sub(`"response":\{"answer":"[a-z]"\}`, `"response":{"answer":"zz"}`)), "content hash"},
		{"a bad result hash", edit(sub(`"result_hash":"[0-9a-f]{64}"`, `"result_hash":"x"`)), "result hash"},
		{"recorded before 1970", edit(sub(`"recorded_at":"[^"]*"`, `"recorded_at":"1969-01-01T00:00:00Z"`)), "1970"},
		{"an unknown field", edit(sub(`^\{"type":"recording","data":\{`, `{"type":"recording","data":{"note":"n",`)), "unknown field"},
		{"repeated", Reseal(t, header, append(append(append([]string(nil), body[:first+1]...), body[first]), body[first+1:]...)), "repeated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := to(t)
			_, err := Import(s, c.dump, 2)
			e := RequireCode(t, err, fault.CodeInvalid)
			if !strings.Contains(e.Error(), "line ") || !strings.Contains(e.Error(), c.want) {
				t.Errorf("error %q names no line or not %q", e.Error(), c.want)
			}
			if empty, err := s.(dump.Store).Empty(context.Background()); err != nil || !empty {
				t.Errorf("after a refused import the store is not empty (%v)", err)
			}
		})
	}
}
