package neo4j

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// TestProcedureFragmentFields checks that the procedure fragment returns
// the fields in the order decodeProcedure reads them (procedureFields,
// versionFields, causeFields).
func TestProcedureFragmentFields(t *testing.T) {
	b, err := os.ReadFile("../../cypher/fragments/procedure.cypher")
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "//") {
			code.WriteString(line + "\n")
		}
	}
	var got []string
	for _, m := range regexp.MustCompile(`\b(p|cv|c|e)\.(\w+)`).FindAllStringSubmatch(code.String(), -1) {
		got = append(got, m[1]+"."+m[2])
	}
	var want []string
	for i, name := range procedureFields {
		if i != pVersion && i != pCauses {
			want = append(want, "p."+name)
		}
	}
	if len(want) != pVersion || pCauses != pVersion+1 || len(procedureFields) != pCauses+1 {
		t.Fatalf("version and causes must be the last two of %d fields", len(procedureFields))
	}
	for _, name := range versionFields {
		want = append(want, "cv."+name)
	}
	want = append(want, "c."+causeFields[0], "e."+causeFields[1])
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("procedure.cypher reads\n%v\nwant (decode.go)\n%v", got, want)
	}
}

// procedureRow is a well-formed row of the procedure fragment.
func procedureRow() []any {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	return []any{
		"proc__a", []any{"get(task_id)"}, "sum", int64(3), int64(5),
		at, at, at,
		true, "ana", at, "ok", "h1", nil,
		nil, nil, nil, true,
		[]any{"h1", "return 1", "starlark", []any{"task_id"}, `{"type":"object"}`, "validated", false, "[]", `{"tools":[]}`, []any{int64(2), int64(1)}, `{"status":"passed","at":"2026-11-30T10:00:00Z","catalogue_revision":"r1","recordings":1,"passed":1}`},
		[]any{[]any{"b", int64(1)}, []any{"a", int64(2)}, []any{"c", int64(1)}},
	}
}

func TestDecodeProcedure(t *testing.T) {
	c := newJSONCaches()
	p, err := c.decodeProcedure(procedureRow())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	want := &procedures.Procedure{
		Name: "proc__a", Signature: []string{"get(task_id)"}, Summary: "sum", Frequency: 3, UseCount: 5,
		CreatedAt: at, UpdatedAt: at, LastUsedAt: &at,
		Grant:    &procedures.Grant{Enabled: true, GrantedBy: "ana", GrantedAt: at, Reason: "ok", CodeHash: "h1"},
		CodeHash: "h1", Code: "return 1", Dialect: "starlark", Parameters: []string{"task_id"},
		InputSchema: map[string]any{"type": "object"}, Status: "validated", Warnings: []procedures.Warning{},
		Causes:       []procedures.CauseLink{{Name: "a", Frequency: 2}, {Name: "b", Frequency: 1}, {Name: "c", Frequency: 1}},
		Baseline:     &procedures.Baseline{Tools: []procedures.ToolContract{}},
		Health:       health.HealthOf([]int64{2, 1}),
		Demoted:      true,
		Verification: &recording.Verification{Status: "passed", At: at, CatalogueRevision: "r1", Recordings: 1, Passed: 1},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got  %+v\nwant %+v", p, want)
	}
	// Nothing optional: no version, grant, retirement, causes.
	r := procedureRow()
	r[pVersion], r[pCauses], r[pGrantEnabled], r[pLastUsedAt] = nil, []any{}, nil, nil
	r[pRetiredAt], r[pRetiredBy], r[pDemoted] = at, "bo", nil
	p, err = c.decodeProcedure(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Grant != nil || p.LastUsedAt != nil || p.Causes != nil || p.CodeHash != "" || p.InputSchema != nil || p.Demoted ||
		p.Retired == nil || p.Retired.RetiredBy != "bo" || !p.Retired.RetiredAt.Equal(at) {
		t.Fatalf("got %+v", p)
	}
}

// TestDecodeProcedureMalformed: every malformed row is a clear error
// naming what is wrong, never a panic and never a half-decoded procedure.
func TestDecodeProcedureMalformed(t *testing.T) {
	c := newJSONCaches()
	with := func(edit func(r []any)) []any {
		r := procedureRow()
		edit(r)
		return r
	}
	version := func(edit func(v []any)) []any {
		return with(func(r []any) {
			v := append([]any(nil), r[pVersion].([]any)...)
			edit(v)
			r[pVersion] = v
		})
	}
	for _, tc := range []struct {
		name string
		row  any
		want string
	}{
		{"nil", nil, "procedure is <nil>, want a list"},
		{"a map (the old shape)", map[string]any{"name": "proc__a"}, "want a list"},
		{"a string", "proc__a", "want a list"},
		{"too short", procedureRow()[:pCauses], "procedure has 19 fields, want 20"},
		{"too long", append(procedureRow(), nil), "procedure has 21 fields, want 20"},
		{"empty", []any{}, "procedure has 0 fields"},
		{"name not a string", with(func(r []any) { r[pName] = int64(1) }), "field name is int64, want string"},
		{"signature not a list", with(func(r []any) { r[pSignature] = "x" }), "field signature is string, want list"},
		{"signature of numbers", with(func(r []any) { r[pSignature] = []any{int64(1)} }), "field signature is int64, want list of strings"},
		{"frequency a float", with(func(r []any) { r[pFrequency] = 1.5 }), "field frequency is float64, want integer"},
		{"created_at a string", with(func(r []any) { r[pCreatedAt] = "2026" }), "field created_at is string, want datetime"},
		{"last_used_at a number", with(func(r []any) { r[pLastUsedAt] = int64(3) }), "field last_used_at is int64, want datetime"},
		{"grant_enabled a string", with(func(r []any) { r[pGrantEnabled] = "yes" }), "field grant_enabled is string, want boolean"},
		{"grant_binding not JSON", with(func(r []any) { r[pGrantBinding] = "{" }), "a stored grant binding does not decode"},
		{"grant_binding a number", with(func(r []any) { r[pGrantBinding] = int64(1) }), "field grant_binding is int64, want string"},
		{"retired_at a bool", with(func(r []any) { r[pRetiredAt] = true }), "field retired_at is bool, want datetime"},
		{"demoted a string", with(func(r []any) { r[pDemoted] = "yes" }), "field demoted is string, want boolean"},
		{"version a map", with(func(r []any) { r[pVersion] = map[string]any{} }), "procedure version is map[string]interface {}, want a list"},
		{"version too short", version(func(v []any) { v[len(v)-1] = nil }), ""}, // (valid: null warnings)
		{"version short", with(func(r []any) { r[pVersion] = []any{"h1"} }), "procedure version has 1 fields, want 11"},
		{"verification not JSON", version(func(v []any) { v[vVerification] = "{" }), "field verification"},
		{"verification a number", version(func(v []any) { v[vVerification] = int64(1) }), "field verification is int64, want string"},
		{"schema not JSON", version(func(v []any) { v[vInputSchema] = "{" }), "field input_schema: unexpected end of JSON input"},
		{"schema a JSON list", version(func(v []any) { v[vInputSchema] = "[1]" }), "field input_schema: json: cannot unmarshal array"},
		{"schema a number", version(func(v []any) { v[vInputSchema] = int64(1) }), "field input_schema is int64, want string"},
		{"warnings not JSON", version(func(v []any) { v[vWarnings] = "nope" }), "field warnings: invalid character"},
		{"warnings of strings", version(func(v []any) { v[vWarnings] = `["x"]` }), "field warnings: json: cannot unmarshal string"},
		{"opaque a string", version(func(v []any) { v[vOpaque] = "no" }), "field opaque is string, want boolean"},
		{"parameters a map", version(func(v []any) { v[vParameters] = map[string]any{} }), "field parameters is map[string]interface {}, want list"},
		{"health a string", version(func(v []any) { v[vHealth] = "[1]" }), "field health is string, want list"},
		{"health of floats", version(func(v []any) { v[vHealth] = []any{1.5} }), "field health is float64, want list of integers"},
		{"causes a string", with(func(r []any) { r[pCauses] = "a" }), "field causes is string, want list"},
		{"cause a map", with(func(r []any) { r[pCauses] = []any{map[string]any{"name": "a"}} }), "procedure cause is map[string]interface {}, want a list"},
		{"cause short", with(func(r []any) { r[pCauses] = []any{[]any{"a"}} }), "procedure cause has 1 fields, want 2"},
		{"cause frequency a string", with(func(r []any) { r[pCauses] = []any{[]any{"a", "1"}} }), "field frequency is string, want integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.decodeProcedure(tc.row)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil || p != nil {
				t.Fatalf("got %+v, %v; want an error %q", p, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "neo4j store: ") {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestDecodeProcedureSharesJSON: a schema text decoded once is the same
// map on the next read (procedures' decoration cache recognises it), and a
// different text is decoded anew.
func TestDecodeProcedureSharesJSON(t *testing.T) {
	caches := newJSONCaches()
	a, err := caches.decodeProcedure(procedureRow())
	if err != nil {
		t.Fatal(err)
	}
	b, err := caches.decodeProcedure(procedureRow())
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(a.InputSchema).UnsafePointer() != reflect.ValueOf(b.InputSchema).UnsafePointer() {
		t.Fatal("the same schema text was decoded twice")
	}
	r := procedureRow()
	r[pVersion].([]any)[vInputSchema] = `{"type":"object","required":["x"]}`
	c, err := caches.decodeProcedure(r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.InputSchema, map[string]any{"type": "object", "required": []any{"x"}}) {
		t.Fatalf("schema %v", c.InputSchema)
	}
}

// FuzzDecodeProcedure: any value the driver could hand over (here: JSON,
// numbers as integers where they are whole) decodes or fails, never
// panics, and a decoded procedure comes with no error.
func FuzzDecodeProcedure(f *testing.F) {
	c := newJSONCaches()
	seed, _ := json.Marshal(procedureRow())
	f.Add(string(seed))
	f.Add(`["a",null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]`)
	f.Add(`["a",[],"",1,2,null,null,null,true,"",null,"","",null,null,null,["h","c","starlark",[],"{}","validated",true,"[]"],[["c",1]]]`)
	f.Add(`{"name":"a"}`)
	f.Add(`[[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[]]`)
	f.Fuzz(func(t *testing.T, text string) {
		var v any
		d := json.NewDecoder(strings.NewReader(text))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return
		}
		p, err := c.decodeProcedure(driverValue(v))
		if (p == nil) == (err == nil) {
			t.Fatalf("got %+v and %v", p, err)
		}
	})
}

// driverValue turns a JSON value into the types the driver hydrates:
// whole numbers as int64, others as float64.
func driverValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = driverValue(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = driverValue(x[k])
		}
	}
	return v
}
