package dump_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/signature"
)

// keptDump is validDump whose version carries its baseline and two
// recordings (a dump written with --with-recordings).
func keptDump(tb testing.TB) []byte {
	tb.Helper()
	recs, err := readAll(validDump(tb))
	if err != nil {
		tb.Fatal(err)
	}
	cat := recs[0].Catalogue
	v := recs[3].Version
	v.Baseline = procedures.BaselineOf([]string{"get_jobs"}, cat)
	at := time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)
	var rrs []dump.Record
	for i, answer := range []string{"<a & b>", "c"} {
		calls := []recording.RecordedCall{{Tool: "get_jobs", Arguments: map[string]any{"n": i}, Response: map[string]any{"jobs": []any{answer}}}}
		r, err := recording.NewRecording(v.Procedure, v.CodeHash, map[string]any{"n": i}, calls, answer, at.Add(time.Duration(i)*time.Second))
		if err != nil {
			tb.Fatal(err)
		}
		rr, err := dump.RecordingRecordOf(r)
		if err != nil {
			tb.Fatal(err)
		}
		rrs = append(rrs, dump.Record{Type: dump.TypeRecording, Recording: rr})
	}
	if rrs[0].Recording.ID > rrs[1].Recording.ID {
		rrs[0], rrs[1] = rrs[1], rrs[0]
	}
	var buf bytes.Buffer
	w := dump.NewWriter(&buf, "embedded", "test")
	if err := w.Begin(dump.Counts{}); err != nil {
		tb.Fatal(err)
	}
	// The group's records, then its recordings, then the decision.
	for _, r := range append(append(recs[:8:8], rrs...), recs[8]) {
		if err := w.Record(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestKeptDumpReads: a dump's baselines and recordings read back as
// written: the baseline as BaselineOf made it, each recording what
// NewRecording made (RecordingRecord.Recording).
func TestKeptDumpReads(t *testing.T) {
	recs, err := readAll(keptDump(t))
	if err != nil || len(recs) != 11 {
		t.Fatalf("the kept dump reads as %d records, %v", len(recs), err)
	}
	if b := recs[3].Version.Baseline; b == nil || len(b.Tools) != 1 || b.Tools[0].Tool != "get_jobs" {
		t.Errorf("baseline read as %+v", b)
	}
	for _, r := range recs[8:10] {
		if r.Type != dump.TypeRecording || r.Group == nil || r.Group.Name != "proc__get_jobs" {
			t.Fatalf("record %+v, want a recording of proc__get_jobs's group", r)
		}
		rec, err := r.Recording.Recording()
		if err != nil || rec.ContentHash != r.Recording.ContentHash || len(rec.Calls) != 1 || rec.Bytes != len(r.Recording.Body) {
			t.Errorf("recording %s: %+v, %v", r.Recording.ID, rec, err)
		}
	}
}

// keptHostile are kept dumps the reader refuses, naming their line: a
// baseline no capture could make, recordings that are not what they say
// or of what the dump lacks, and either in a format 2 dump (an older
// procgraph refuses a format 3 one by its unknown field or record type).
func keptHostile(tb testing.TB) map[string]hostile {
	k := keptDump(tb)
	recs, err := readAll(k)
	if err != nil {
		tb.Fatal(err)
	}
	rec := recs[8].Recording
	h1 := signature.CodeHash("tools.get_jobs()\n")
	body := string(rec.Body)
	return map[string]hostile{
		"baseline of another tool":      {resealed(tb, k, `"baseline":{"tools":[{"tool":"get_jobs"`, `"baseline":{"tools":[{"tool":"kill_job"`), "line 5: version " + h1 + " of proc__get_jobs: invalid baseline: tool \"kill_job\""},
		"baseline of a procedure":       {resealed(tb, k, `"baseline":{"tools":[{"tool":"get_jobs"`, `"baseline":{"tools":[{"tool":"proc__get_jobs"`), "invalid baseline"},
		"baseline tool repeated":        {resealed(tb, k, `"baseline":{"tools":[{`, `"baseline":{"tools":[`+baselineTool(tb)+`,{`), "repeated or out of order"},
		"baseline hash malformed":       {resealed(tb, k, `"tools":[{"tool":"get_jobs","schema_hash":"sha256:`, `"tools":[{"tool":"get_jobs","schema_hash":"sha256:\n`), "is not sha256"},
		"baseline unknown field":        {resealed(tb, k, `"baseline":{"tools":[{`, `"baseline":{"trusted":true,"tools":[{`), "unknown field"},
		"baseline in format 2":          {resealed(tb, resealed(tb, k, `"format":3`, `"format":2`), healthJSON(tb), ""), "line 5: a baseline in a format 2 dump"},
		"recording in format 2":         {resealed(tb, resealed(tb, resealed(tb, k, `"format":3`, `"format":2`), healthJSON(tb), ""), `,"baseline":`+baselineJSON(tb), ""), "line 10: a recording in a format 2 dump"},
		"recording of another version":  {resealed(tb, k, `"type":"recording","data":{"procedure":"proc__get_jobs","code_hash":"`+h1, `"type":"recording","data":{"procedure":"proc__get_jobs","code_hash":"`+strings.Repeat("a", 64)), "line 10: a recording of version"},
		"recording of another group":    {resealed(tb, k, `"type":"recording","data":{"procedure":"proc__get_jobs"`, `"type":"recording","data":{"procedure":"proc__other"`), "outside its procedure's group"},
		"recording after the decisions": {moveRecording(tb, k), "outside a procedure group"},
		"recording body oversized":      {resealed(tb, k, `"response":{"jobs":[`, `"response":{"jobs":["`+strings.Repeat("x", recording.MaxRecordingBytes)+`",`), "more than"},
		"recording body not compact":    {resealed(tb, k, `"body":{"arguments":`, `"body":{ "arguments":`), "compact"},
		"recording body unescaped html": {resealed(tb, k, `\u003ca \u0026 b\u003e`, `<a & b>`), "compact"},
		"recording body extra field":    {resealed(tb, k, `"body":{"arguments":`, `"body":{"evil":1,"arguments":`), "unknown field"},
		"recording content hash":        {resealed(tb, k, `"content_hash":"`+rec.ContentHash, `"content_hash":"`+strings.Repeat("0", 64)), "content hash"},
		"recording id":                  {resealed(tb, k, `"id":"`+rec.ID, `"id":"rec_`+strings.Repeat("0", 32)), "its id"},
		"recording body a string":       {resealed(tb, k, `"body":`+body, `"body":"`+strings.ReplaceAll(body, `"`, `\"`)+`"`), "not a recording"},
		"recording repeated":            {resealed(tb, k, `{"type":"decision"`, strings.Split(string(k), "\n")[9]+"\n"+`{"type":"decision"`), "repeated or out of order"},
	}
}

// baselineTool and baselineJSON are the kept dump's baseline's contract and
// the baseline as JSON.
func baselineTool(tb testing.TB) string {
	b := baselineJSON(tb)
	return strings.TrimSuffix(strings.TrimPrefix(b, `{"tools":[`), `]}`)
}

func baselineJSON(tb testing.TB) string {
	tb.Helper()
	line := ""
	for _, l := range strings.Split(string(keptDump(tb)), "\n") {
		if strings.HasPrefix(l, `{"type":"version"`) {
			line = l
		}
	}
	i := strings.Index(line, `"baseline":`)
	return strings.TrimSuffix(line[i+len(`"baseline":`):], "}}")
}

// moveRecording is the kept dump with its first recording after the
// decision.
func moveRecording(tb testing.TB, k []byte) []byte {
	tb.Helper()
	lines := strings.Split(strings.TrimSuffix(string(k), "\n"), "\n")
	body := append(append(append([]string(nil), lines[1:9]...), lines[10:12]...), lines[9])
	return reseal(tb, lines[0], body)
}

// reseal is a dump of header and body lines with a trailer that matches.
func reseal(tb testing.TB, header string, body []string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := func(s string) { buf.WriteString(s + "\n") }
	w(header)
	for _, l := range body {
		w(l)
	}
	return resealed(tb, append(buf.Bytes(), []byte(`{"type":"trailer","data":{"records":`+fmt.Sprint(len(body))+`,"counts":`+countsOf(body)+`,"sha256":""}}`+"\n")...), "\x00", "\x00")
}

// countsOf is the trailer counts of body lines, as JSON.
func countsOf(body []string) string {
	n := map[string]int{}
	var order []string
	for _, l := range body {
		t := strings.TrimPrefix(l, `{"type":"`)
		t = t[:strings.Index(t, `"`)]
		if n[t] == 0 {
			order = append(order, t)
		}
		n[t]++
	}
	parts := make([]string, len(order))
	for i, t := range order {
		parts[i] = fmt.Sprintf("%q:%d", t, n[t])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestKeptDumpsRefused: each of keptHostile is refused, CodeInvalid,
// naming its line.
func TestKeptDumpsRefused(t *testing.T) {
	for name, h := range keptHostile(t) {
		t.Run(name, func(t *testing.T) {
			_, err := readAll(h.dump)
			if fault.ErrorCode(err) != fault.CodeInvalid || !strings.Contains(fmt.Sprint(err), "dump line ") || !strings.Contains(fmt.Sprint(err), h.want) {
				t.Errorf("error %v, want CodeInvalid naming the line and %q", err, h.want)
			}
		})
	}
}

// TestKeptSeed: testdata/dumps/kept.jsonl, the fuzz corpus's seed of a
// dump with baselines and recordings, reads (regenerate it with
// PROCGRAPH_WRITE_SEEDS=1).
func TestKeptSeed(t *testing.T) {
	path := filepath.Join("testdata", "dumps", "kept.jsonl")
	if os.Getenv("PROCGRAPH_WRITE_SEEDS") != "" {
		if err := os.WriteFile(path, keptDump(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readAll(b)
	if err != nil || len(recs) != 11 || recs[8].Type != dump.TypeRecording || recs[3].Version.Baseline == nil {
		t.Fatalf("%s reads as %d records, %v", path, len(recs), err)
	}
}
