package api

import (
	"bytes"
	stdjson "encoding/json"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/procgraph/procgraph/procedures"
)

// TestWriteJSONSameBytes checks that writeJSON's encoder writes what
// encoding/json writes, for the values answers are made of.
func TestWriteJSONSameBytes(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	cases := []struct {
		name string
		v    any
	}{
		{"html and separators", map[string]any{"s": "<a href='x'>&</a> \u2028\u2029"}},
		{"invalid utf-8", map[string]any{"s": "a\xffb\xc3"}},
		{"control characters", map[string]any{"s": "\x00\x01\t\n\r\x1f\"\\"}},
		{"unicode", map[string]any{"kéll_job": "kіll_job 日本"}},
		{"numbers", map[string]any{"a": 0.1, "b": 1e21, "c": 1e-7, "d": int64(math.MaxInt64), "e": math.Copysign(0, -1), "f": 123456789.0}},
		{"sorted keys", map[string]any{"b": 1, "a": 2, "C": 3, "": 4}},
		{"nil and empty", map[string]any{"nil slice": []string(nil), "empty": []string{}, "nil map": map[string]any(nil), "null": nil}},
		{"raw", map[string]any{"raw": stdjson.RawMessage(`{"x":[1,2]}`)}},
		{"time", map[string]any{"at": at, "ptr": &at}},
		{"procedure", &procedures.Procedure{Name: "proc__a__b", Signature: []string{"a", "b"}, Code: "x = tools.a()\nreturn '<&>'",
			Parameters: []string{}, Causes: []procedures.CauseLink{{Name: "c", Frequency: 2}}, CreatedAt: at, LastUsedAt: &at,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}}}},
		{"error body", map[string]any{"error": map[string]any{"code": "invalid", "message": "bad <input>", "details": map[string]any{"field": "x"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := stdjson.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(c.v); err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			writeJSON(rec, 200, c.v)
			if got := rec.Body.String(); got != want.String() {
				t.Errorf("writeJSON wrote\n%q\nencoding/json writes\n%q", got, want.String())
			}
		})
	}
}
