package api

import (
	"bytes"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/procgraph/procgraph/procedures"
)

// encodeReference is what writeJSON writes for v.
func encodeReference(tb testing.TB, v any) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// awkward are strings that need escaping, or HTML characters that must not
// be escaped, or are not UTF-8.
var awkward = []string{"", "plain", "a\"b\\c", "line\nbreak\ttab", "<b>&amp;</b>", "\u2028\u2029", "é ü 日本", "\x00\x1f", "bad \xff utf-8", "</script>"}

func randomString(r *rand.Rand) string {
	return awkward[r.IntN(len(awkward))] + awkward[r.IntN(len(awkward))]
}

func randomStrings(r *rand.Rand) []string {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+r.IntN(3))
	for i := range out {
		out[i] = randomString(r)
	}
	return out
}

func randomTime(r *rand.Rand) time.Time {
	t := time.UnixMilli(r.Int64N(4_000_000_000_000)).UTC()
	if r.IntN(4) == 0 {
		t = t.Add(time.Duration(r.IntN(1000)) * time.Microsecond) // sub-millisecond digits too
	}
	return t
}

func ptrTo[T any](v T) *T { return &v }

// randomProcedure fills every field of a procedure (each may be zero, nil
// or empty) from r; names come from a small pool so that heads are reused
// and must be checked.
func randomProcedure(r *rand.Rand) *procedures.Procedure {
	maybe := func() bool { return r.IntN(2) == 0 }
	p := &procedures.Procedure{
		Name: []string{"proc__a", "proc__b", "proc__<c>"}[r.IntN(3)], Signature: randomStrings(r), Summary: randomString(r),
		Description: randomString(r), Code: randomString(r), Dialect: randomString(r), CodeHash: randomString(r),
		Parameters: randomStrings(r), Status: procedures.Status(randomString(r)), Frequency: r.Int64N(1 << 40), UseCount: -r.Int64N(5),
		ReadOnly: maybe(), StateChangingTools: randomStrings(r), UnknownTools: randomStrings(r), Opaque: maybe(),
		ExternalAccess: maybe(), Problem: randomString(r), Exposed: maybe(), CreatedAt: randomTime(r), UpdatedAt: randomTime(r),
	}
	if maybe() {
		p.InputSchema = map[string]any{"type": "object", "properties": map[string]any{randomString(r): map[string]any{"type": "integer", "maximum": 1e21, "minimum": -0.5}},
			"required": []any{randomString(r)}, "additionalProperties": false, "z": nil, "a": 3.0}
	}
	if maybe() {
		p.Warnings = []procedures.Warning{}
		for range r.IntN(3) {
			p.Warnings = append(p.Warnings, procedures.Warning{Line: r.IntN(100), Column: r.IntN(80), Message: randomString(r)})
		}
	}
	if maybe() {
		p.AutoRun = procedures.AutoRun{Enabled: true, Active: maybe(), GrantedBy: ptrTo(randomString(r)), GrantedAt: ptrTo(randomTime(r)),
			Reason: ptrTo(randomString(r)), CodeHash: ptrTo(randomString(r))}
		if maybe() {
			p.AutoRun.InactiveReason = ptrTo(randomString(r))
		}
	}
	if maybe() {
		p.Causes = []procedures.CauseLink{}
		for range r.IntN(3) {
			p.Causes = append(p.Causes, procedures.CauseLink{Name: randomString(r), Frequency: r.Int64N(9)})
		}
	}
	if maybe() {
		p.Score = ptrTo([]float64{0, 1, 0.1 + 0.2, 1e-7, 123456789.125, 1e21, math.Copysign(0, -1)}[r.IntN(7)])
	}
	if maybe() {
		p.LastUsedAt = ptrTo(randomTime(r))
	}
	if maybe() {
		p.Grant = &procedures.Grant{Enabled: true, GrantedBy: "x"}
	}
	if maybe() {
		p.Retired = &procedures.Retirement{RetiredBy: randomString(r), RetiredAt: randomTime(r), Reason: randomString(r)}
	}
	p.Demoted = maybe()
	if maybe() {
		p.Verification = &procedures.Verification{Status: "failed", At: randomTime(r), CatalogueRevision: randomString(r), Recordings: 3, Passed: 1}
	}
	p.Drift = []procedures.Drift{}
	if maybe() {
		p.Stale = true
		p.Drift = append(p.Drift, procedures.Drift{Tool: randomString(r), Change: randomString(r)})
	}
	if maybe() {
		p.Baseline = &procedures.Baseline{}
		p.DriftRevision = randomString(r)
	}
	if maybe() {
		for range r.IntN(4) + 1 {
			class := ""
			if maybe() {
				class = procedures.FailureClasses[r.IntN(len(procedures.FailureClasses))]
			}
			p.Health = p.Health.Add(procedures.Run{Failure: class, Duration: time.Duration(r.IntN(40000)) * time.Millisecond, At: randomTime(r)})
		}
	}
	return p
}

// TestProcedureJSON: a procedure list is written byte for byte as
// writeJSON writes it, whatever the values (escapes, HTML characters,
// invalid UTF-8, nil and empty lists, times, scores), and a cached head is
// never written for a procedure whose values changed (names repeat with
// other values throughout).
func TestProcedureJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	covered := map[string]bool{}
	for i := 0; i < 3000; i++ {
		page := make([]*procedures.Procedure, r.IntN(4))
		for j := range page {
			page[j] = randomProcedure(r)
			coverFields(reflect.ValueOf(*page[j]), covered)
		}
		total := r.IntN(100)
		rec := httptest.NewRecorder()
		writeProcedureList(rec, page, total)
		if len(page) == 0 {
			page = []*procedures.Procedure{}
		}
		want := encodeReference(t, map[string]any{"procedures": page, "total": total})
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("case %d:\ngot  %s\nwant %s", i, got, want)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" || rec.Code != 200 {
			t.Fatalf("status %d, content type %q", rec.Code, ct)
		}
	}
	// Every field of Procedure was set in some case: a field added to it
	// fails here until randomProcedure (and so the comparison) covers it.
	pt := reflect.TypeOf(procedures.Procedure{})
	for i := range pt.NumField() {
		if f := pt.Field(i); f.IsExported() && !covered[f.Name] {
			t.Errorf("field %s never set by randomProcedure", f.Name)
		}
	}
}

// coverFields records the fields of p that are not zero.
func coverFields(p reflect.Value, covered map[string]bool) {
	for i := range p.NumField() {
		if !p.Field(i).IsZero() {
			covered[p.Type().Field(i).Name] = true
		}
	}
}

// TestProcedureJSONUnencodable: a schema that does not encode answers as
// writeJSON does (internal error), not a broken body.
func TestProcedureJSONUnencodable(t *testing.T) {
	p := &procedures.Procedure{Name: "proc__bad", InputSchema: map[string]any{"f": func() {}}}
	rec := httptest.NewRecorder()
	writeProcedureList(rec, []*procedures.Procedure{p}, 1)
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"internal"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}

// FuzzProcedureJSON compares the list writer with writeJSON on procedures
// whose strings come from the fuzzer.
func FuzzProcedureJSON(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, s, int64(1), uint64(7))
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64, seed uint64) {
		r := rand.New(rand.NewPCG(seed, uint64(n)))
		p := randomProcedure(r)
		p.Code, p.Description, p.Frequency = a, b, n
		p.Signature = []string{a, b}
		if p.Causes != nil {
			p.Causes = append(p.Causes, procedures.CauseLink{Name: b})
		}
		rec := httptest.NewRecorder()
		writeProcedureList(rec, []*procedures.Procedure{p}, int(n))
		want := encodeReference(t, map[string]any{"procedures": []*procedures.Procedure{p}, "total": int(n)})
		if !bytes.Equal(rec.Body.Bytes(), want) {
			t.Fatalf("got  %s\nwant %s", rec.Body.Bytes(), want)
		}
	})
}

// TestProcedureJSONHeadFollowsEachField changes one value of a head at a
// time: each change is written at once.
func TestProcedureJSONHeadFollowsEachField(t *testing.T) {
	changes := map[string]func(p *procedures.Procedure){
		"name":         func(p *procedures.Procedure) { p.Name += "x" },
		"signature":    func(p *procedures.Procedure) { p.Signature = []string{"t", "u"} },
		"summary":      func(p *procedures.Procedure) { p.Summary += "x" },
		"description":  func(p *procedures.Procedure) { p.Description += "x" },
		"code":         func(p *procedures.Procedure) { p.Code += "x" },
		"dialect":      func(p *procedures.Procedure) { p.Dialect += "x" },
		"code_hash":    func(p *procedures.Procedure) { p.CodeHash += "x" },
		"parameters":   func(p *procedures.Procedure) { p.Parameters = []string{} },
		"input_schema": func(p *procedures.Procedure) { p.InputSchema = map[string]any{"type": "object"} },
	}
	for field, change := range changes {
		t.Run(field, func(t *testing.T) {
			p := &procedures.Procedure{Name: "proc__" + field, Signature: []string{"t"}, Code: "c", CodeHash: "h"}
			for step := 0; step < 2; step++ {
				rec := httptest.NewRecorder()
				writeProcedureList(rec, []*procedures.Procedure{p}, 1)
				if want := encodeReference(t, map[string]any{"procedures": []*procedures.Procedure{p}, "total": 1}); !bytes.Equal(rec.Body.Bytes(), want) {
					t.Fatalf("step %d:\ngot  %s\nwant %s", step, rec.Body.Bytes(), want)
				}
				change(p)
			}
		})
	}
}
