package dump_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
	"github.com/procgraph/procgraph/signature"
)

// validHealth is the health of validDump's version: a success, then a
// tool error.
func validHealth() *dump.HealthRecord {
	at := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	h := health.Health{}.Add(health.Run{Duration: 3 * time.Millisecond, At: at})
	return dump.HealthRecordOf(h.Add(health.Run{Failure: health.FailureToolError, Duration: time.Second, At: at.Add(time.Second)}))
}

// streakJSON is how validHealth's JSON carries its demotion streak.
func streakJSON(tb testing.TB) string {
	h := validHealth()
	b, err := json.Marshal(h.StreakCallers)
	if err != nil || h.DemotionStreak != 1 {
		tb.Fatalf("validHealth's streak: %d, %v", h.DemotionStreak, err)
	}
	return `,"demotion_streak":1,"streak_callers":` + string(b)
}

// healthJSON is how validDump's version line carries its health.
func healthJSON(tb testing.TB) string {
	b, err := json.Marshal(validHealth())
	if err != nil {
		tb.Fatal(err)
	}
	return `,"health":` + string(b)
}

// validDump is a small dump written by Writer: a catalogue, a cause, a
// procedure group with every part and a decision.
func validDump(tb testing.TB) []byte {
	tb.Helper()
	cat, err := procedures.NewCatalogue([]procedures.Tool{{Name: "get_jobs", ReadOnly: true}})
	if err != nil {
		tb.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	code := "tools.get_jobs()\n"
	h1 := signature.CodeHash(code)
	var buf bytes.Buffer
	w := dump.NewWriter(&buf, "embedded", "test")
	recs := []dump.Record{
		{Type: dump.TypeCatalogue, Catalogue: cat},
		{Type: dump.TypeCause, Cause: &dump.CauseRecord{Name: "slow", Description: "d"}},
		{Type: dump.TypeProcedure, Procedure: &dump.ProcedureRecord{Name: "proc__get_jobs", Signature: []string{"get_jobs"},
			Current: h1, Frequency: 1, CreatedAt: at, UpdatedAt: at, Grant: &procedures.Grant{Enabled: true, GrantedAt: at, CodeHash: h1},
			SearchParts: []string{"get_jobs", "get jobs", "slow"}}},
		{Type: dump.TypeVersion, Version: &dump.VersionRecord{Procedure: "proc__get_jobs", CodeHash: h1, Code: code, CapturedAt: at, Frequency: 1, Status: procedures.StatusSucceeded,
			Health: validHealth()}},
		{Type: dump.TypeUsage, Usage: &dump.UsageRecord{Scope: dump.UsageVersion, Procedure: "proc__get_jobs", CodeHash: h1, Key: "k"}},
		{Type: dump.TypeUsage, Usage: &dump.UsageRecord{Scope: dump.UsageProcedure, Procedure: "proc__get_jobs", Key: "k"}},
		{Type: dump.TypeEdge, Edge: &dump.EdgeRecord{Cause: "slow", Procedure: "proc__get_jobs", Frequency: 1}},
		{Type: dump.TypeUsage, Usage: &dump.UsageRecord{Scope: dump.UsageEdge, Procedure: "proc__get_jobs", Cause: "slow", Key: "k"}},
		{Type: dump.TypeDecision, Decision: &audit.Decision{ID: audit.NewDecisionID(at), Kind: audit.KindGrant,
			Procedure: "proc__get_jobs", CodeHash: h1, Outcome: audit.Allowed, Reason: "granted", Actor: "alice", AllowedTools: []string{}, At: at}},
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

// readAll reads every record of the dump data, or the error.
func readAll(data []byte) ([]dump.Record, error) {
	d, err := dump.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []dump.Record
	for {
		r, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
}

func TestValidDumpReads(t *testing.T) {
	recs, err := readAll(validDump(t))
	if err != nil || len(recs) != 9 {
		t.Fatalf("the valid dump reads as %d records, %v", len(recs), err)
	}
}

// TestDumpFormats: a format 2 dump (no health) and a format 1 dump (no
// search_parts either) read, format 1's search parts derived from their
// signature and summary; format 1 with search_parts, format 2 with
// health, an unknown format, bad search parts and a health that no runs
// could add up to are refused naming the line.
func TestDumpFormats(t *testing.T) {
	reseal := func(data []byte, from, to string) []byte { return resealed(t, data, from, to) }
	v3 := validDump(t)
	recs, err := readAll(v3)
	if err != nil || !slices.Equal(recs[2].Procedure.SearchParts, []string{"get_jobs", "get jobs", "slow"}) {
		t.Fatalf("format 3 search parts = %v, %v", recs, err)
	}
	if h := recs[3].Version.Health.Health(); h.Runs != 2 || h.Failures[health.FailureToolError] != 1 || h.Percentile(0.5) == nil ||
		h.DemotionStreak != 1 || h.StreakCallerCount() != 1 {
		t.Errorf("format 3 health = %+v", h)
	}
	streak := streakJSON(t)
	older := reseal(v3, streak, "")
	if recs, err := readAll(older); err != nil || recs[3].Version.Health.Health().DemotionStreak != 0 || recs[3].Version.Health.Health().Runs != 2 {
		t.Fatalf("a dump written before the demotion streak: %v, %v; want it read, without a streak", recs, err)
	}
	v2 := reseal(reseal(v3, `"format":3`, `"format":2`), healthJSON(t), "")
	if recs, err := readAll(v2); err != nil || recs[3].Version.Health != nil {
		t.Fatalf("format 2 dump: %v, %v; want it read, its version without health", recs, err)
	}
	v1 := reseal(reseal(v2, `"format":2`, `"format":1`), `,"search_parts":["get_jobs","get jobs","slow"]`, "")
	recs, err = readAll(v1)
	if err != nil {
		t.Fatalf("format 1 dump refused: %v", err)
	}
	if got := recs[2].Procedure.SearchParts; !slices.Equal(got, []string{"get_jobs", "get jobs"}) {
		t.Errorf("format 1 procedure's search parts = %q, want its signature's", got)
	}
	for _, c := range []struct {
		name, want string
		dump       []byte
	}{
		{"format 4", "line 1: dump format 4", reseal(v2, `"format":2`, `"format":4`)},
		{"format 1 with search parts", "line 4: search_parts in a format 1", reseal(v2, `"format":2`, `"format":1`)},
		{"format 2 with health", "line 5: health in a format 2", reseal(v3, `"format":3`, `"format":2`)},
		{"health runs not its parts", "line 5: version", reseal(v3, `"runs":2`, `"runs":3`)},
		{"health of no run", "line 5: version", reseal(v3, healthJSON(t), `,"health":{"runs":0,"succeeded":0,"failed":0,"failures":{},"duration_buckets":[],"last_success_at":null,"last_failure_at":null,"last_failure_class":"","consecutive_failures":0}`)},
		{"health unknown class", "line 5: version", reseal(v3, `"failures":{"tool_error":1}`, `"failures":{"cosmic_ray":1}`)},
		{"health negative bucket", "line 5: version", reseal(v3, `"duration_buckets":[0,0,1,0,0,0,0,0,0,1,`, `"duration_buckets":[0,0,3,0,0,0,0,0,0,-1,`)},
		{"health short buckets", "line 5: version", reseal(v3, `"duration_buckets":[0,0,1,0,0,0,0,0,0,1,`, `"duration_buckets":[1,1,`)},
		{"health consecutive past failed", "line 5: version", reseal(v3, `"consecutive_failures":1`, `"consecutive_failures":2`)},
		{"health last class counts none", "line 5: version", reseal(v3, `"last_failure_class":"tool_error"`, `"last_failure_class":"timeout"`)},
		{"health streak past consecutive", "line 5: version", reseal(v3, `"demotion_streak":1`, `"demotion_streak":2`)},
		{"health streak without callers", "line 5: version", reseal(v3, streak, `,"demotion_streak":1`)},
		{"health callers without streak", "line 5: version", reseal(v3, `"demotion_streak":1,`, ``)},
		{"health callers not hashes", "line 5: version", reseal(v3, streak, `,"demotion_streak":1,"streak_callers":[1,1]`)},
		{"repeated part", "line 4: procedure proc__get_jobs: search_parts", reseal(v2, `"slow"]`, `"get_jobs"]`)},
		{"empty part", "line 4: procedure proc__get_jobs: search_parts", reseal(v2, `"slow"]`, `""]`)},
		{"too many parts", "line 4: procedure.search_parts has 67 items", reseal(v2, `"slow"]`, `"slow"`+manyParts()+`]`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(c.dump)
			if fault.ErrorCode(err) != fault.CodeInvalid || !strings.Contains(fmt.Sprint(err), c.want) {
				t.Errorf("error %v, want CodeInvalid with %q", err, c.want)
			}
		})
	}
}

// resealed is the dump data with the first from replaced by to, its
// trailer's checksum made to match: a dump whose only fault is that content.
func resealed(tb testing.TB, data []byte, from, to string) []byte {
	tb.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	body := strings.Join(lines[:len(lines)-1], "\n") + "\n"
	body = strings.Replace(body, from, to, 1)
	var n struct {
		Data dump.TrailerRecord `json:"data"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &n); err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	n.Data.SHA256 = hex.EncodeToString(sum[:])
	tr, _ := json.Marshal(map[string]any{"type": "trailer", "data": n.Data})
	return []byte(body + string(tr) + "\n")
}

// hostile is a dump the reader refuses, with what its error says.
type hostile struct {
	dump []byte
	want string
}

// hostileDumps are dumps crafted to carry authority (issue 19 item 4),
// each refused by the reader: a version whose code calls kill_job under a
// read-only signature's hash, an opaque version marked plain, a decision
// note past the recorder's bound, a decision actor holding a token.
func hostileDumps(tb testing.TB) map[string]hostile {
	v := validDump(tb)
	h1 := signature.CodeHash("tools.get_jobs()\n")
	// recode is v whose version holds code, under code's own hash.
	recode := func(code, inJSON string) []byte {
		return resealed(tb, []byte(strings.ReplaceAll(string(v), h1, signature.CodeHash(code))), `"code":"tools.get_jobs()\n"`, `"code":`+inJSON)
	}
	return map[string]hostile{
		"code calls another tool": {recode("tools.get_jobs()\ntools.kill_job()\n", `"tools.get_jobs()\ntools.kill_job()\n"`), "not its procedure's signature"},
		"code another hash":       {resealed(tb, v, `"code":"tools.get_jobs()\n"`, `"code":"tools.get_jobs()\ntools.kill_job()\n"`), "its code gives code_hash"},
		"opaque marked plain":     {recode("tools.get_jobs()\ngetattr(tools, \"get_jobs\")()\n", `"tools.get_jobs()\ngetattr(tools, \"get_jobs\")()\n"`), "opaque true"},
		"note past the bound":     {resealed(tb, v, `"reason":"granted"`, `"reason":"granted","note":"`+strings.Repeat("n", fields.MaxNoteBytes+1)+`"`), "note"},
		"actor holding a token":   {resealed(tb, v, `"actor":"alice"`, `"actor":"pgt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"`), "token"},
		"dialect unknown":         {resealed(tb, v, `"dialect":""`, `"dialect":"cobol"`), "unknown dialect"},
	}
}

// TestHostileDumpsRefused: each of hostileDumps is refused naming its line.
func TestHostileDumpsRefused(t *testing.T) {
	for name, h := range hostileDumps(t) {
		t.Run(name, func(t *testing.T) {
			_, err := readAll(h.dump)
			if fault.ErrorCode(err) != fault.CodeInvalid || !strings.Contains(fmt.Sprint(err), "dump line ") || !strings.Contains(fmt.Sprint(err), h.want) {
				t.Errorf("error %v, want CodeInvalid naming the line and %q", err, h.want)
			}
		})
	}
}

// manyParts is search.MaxParts distinct parts, each after a comma.
func manyParts() string {
	var b strings.Builder
	for i := range search.MaxParts {
		fmt.Fprintf(&b, `,"p%d"`, i)
	}
	return b.String()
}

// FuzzDumpReader: the reader never panics; an error is CodeInvalid or
// CodeUnavailable naming its line; a dump it accepts, written again by
// Writer, reads back as the same records.
func FuzzDumpReader(f *testing.F) {
	f.Add(validDump(f))
	for _, h := range hostileDumps(f) {
		f.Add(h.dump)
	}
	f.Add(keptDump(f))
	for _, h := range keptHostile(f) {
		f.Add(h.dump)
	}
	// Each field at and past its bound, the small ones (a 1 MiB object
	// or a 60 MiB summary makes each fuzzing step slow).
	for _, c := range boundCases() {
		if d := boundsDump(f, c.edit); len(d) < 64<<10 {
			f.Add(d)
		}
	}
	seeds, _ := filepath.Glob(filepath.Join("testdata", "dumps", "*.jsonl"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := readAll(data)
		if err != nil {
			if c := fault.ErrorCode(err); c != fault.CodeInvalid {
				t.Fatalf("error with code %s: %v", c, err)
			}
			return
		}
		for _, r := range recs {
			// An accepted version's code gives its hash (analysed again).
			if v := r.Version; v != nil {
				if a, err := signature.Analyze(v.Code, signature.Dialect(v.Dialect)); v.Dialect != "" && (err != nil || a.CodeHash != v.CodeHash) {
					t.Fatalf("an accepted version's code does not give its hash: %v", err)
				}
			}
		}
		var buf bytes.Buffer
		w := dump.NewWriter(&buf, "x", "x")
		if err := w.Begin(nil); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Record(r); err != nil {
				t.Fatalf("an accepted record does not write: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := readAll(buf.Bytes())
		if err != nil {
			t.Fatalf("an accepted dump, written again, is refused: %v", err)
		}
		a, _ := json.Marshal(recs)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("records changed when written again:\n%s\n%s", a, b)
		}
	})
}
