package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/search"
	"github.com/procgraph/procgraph/signature"
)

// TestSchemaBoundsAreTheGoBounds: for every bounded string of every
// request body, the published maxLength is the field's byte bound, a value
// of that many bytes in two-byte characters passes both the JSON Schema
// and the Go check, and one character more (still within maxLength as
// JSON Schema counts) is refused by the Go check naming the field. And the
// domain's constants are the declared ones.
func TestSchemaBoundsAreTheGoBounds(t *testing.T) {
	names := make([]string, 0, len(requestBodies))
	for n := range requestBodies {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		body := requestBodies[name]
		var published any
		if err := json.Unmarshal(requestSchema(body), &published); err != nil {
			t.Fatal(err)
		}
		body.Walk(func(path string, f fields.Field) {
			if f.Type != fields.String || f.MaxBytes == 0 {
				return
			}
			checked++
			t.Run(name+"."+path, func(t *testing.T) {
				own := schemaAt(t, published, path)
				if got := own["maxLength"]; got != float64(f.MaxBytes) {
					t.Fatalf("maxLength %v, want %d", got, f.MaxBytes)
				}
				schema, err := schemas.CompileSchema(own)
				if err != nil {
					t.Fatal(err)
				}
				atLimit := strings.Repeat("é", f.MaxBytes/2) + strings.Repeat("a", f.MaxBytes%2)
				if err := schema.Validate(atLimit); err != nil {
					t.Fatalf("the schema refuses %d bytes: %v", f.MaxBytes, err)
				}
				if err := body.Check(docAt(path, atLimit)); err != nil {
					t.Fatalf("Check refuses %d bytes: %v", f.MaxBytes, err)
				}
				over := strings.Repeat("é", f.MaxBytes/2+1)
				if err := schema.Validate(over); err != nil {
					t.Fatalf("the schema refuses %d characters (maxLength %d): %v", f.MaxBytes/2+1, f.MaxBytes, err)
				}
				err = body.Check(docAt(path, over))
				var fe *fault.Error
				want := strings.ReplaceAll(path, "[]", "0")
				if !errors.As(err, &fe) || fe.Code != fault.CodeInvalid || fe.Details["field"] != want {
					t.Fatalf("Check(%d bytes) = %v, want invalid_request on %s", len(over), err, want)
				}
			})
		})
	}
	if checked < 15 {
		t.Fatalf("only %d bounded strings checked", checked)
	}
	for name, c := range map[string][2]int{
		"MaxKeyBytes":       {fields.MaxKeyBytes, fields.MaxKeyBytes},
		"MaxCauseNameBytes": {fields.MaxKeyBytes, fields.CauseName.MaxBytes},
		"MaxCauseDescBytes": {fields.MaxCauseDescBytes, fields.CauseDesc.MaxBytes},
		"MaxSummaryBytes":   {fields.MaxSummaryBytes, fields.Summary.MaxBytes},
		"MaxReasonBytes":    {fields.MaxReasonBytes, fields.Reason.MaxBytes},
		"search.MaxBytes":   {search.MaxBytes, fields.Search.MaxBytes},
		"MaxFindLimit":      {procedures.MaxFindLimit, *fields.Limit.Max},
		"MaxCatalogueTools": {fields.MaxCatalogueTools, fields.MaxCatalogueTools},
		"MaxWait":           {int(gate.MaxWait / time.Second), *fields.WaitS.Max},
		"MaxDecisionLimit":  {audit.MaxDecisionLimit, *fields.DecisionLimit.Max},
	} {
		if c[0] != c[1] {
			t.Errorf("%s: the domain's %d, the schema's %d", name, c[0], c[1])
		}
	}
}

// schemaAt is the schema of the field at a dotted path ("[]": the items).
func schemaAt(t *testing.T, schema any, path string) map[string]any {
	t.Helper()
	cur, _ := schema.(map[string]any)
	for _, part := range strings.Split(path, ".") {
		if part == "[]" {
			cur, _ = cur["items"].(map[string]any)
		} else {
			props, _ := cur["properties"].(map[string]any)
			cur, _ = props[part].(map[string]any)
		}
		if cur == nil {
			t.Fatalf("no schema at %s", path)
		}
	}
	return cur
}

// docAt is a document holding v at a dotted path, and nothing else the
// path does not need.
func docAt(path string, v any) any {
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == "[]" {
			v = []any{v}
		} else {
			v = map[string]any{parts[i]: v}
		}
	}
	return v
}

// TestOpenAPIAgreesWithTheRouteTable: every route is an operation of
// /openapi.json with its body schema and scope, every operation is a route
// (or an MCP endpoint), and the router serves exactly the route table.
func TestOpenAPIAgreesWithTheRouteTable(t *testing.T) {
	s, err := New(Config{MCPPaths: map[string]string{"/mcp": "MCP"}})
	if err != nil {
		t.Fatal(err)
	}
	doc := s.OpenAPI()
	routes := map[string]route{}
	for _, rt := range s.routeTable() {
		key := rt.method + " " + rt.pattern
		if _, dup := routes[key]; dup {
			t.Errorf("%s appears twice in the route table", key)
		}
		routes[key] = rt
		op := doc.Paths[rt.pattern][strings.ToLower(rt.method)]
		if op == nil {
			t.Errorf("%s is not in /openapi.json", key)
			continue
		}
		switch {
		case rt.body == "" && op.RequestBody != nil:
			t.Errorf("%s documents a body it does not take", key)
		case rt.body != "" && (op.RequestBody == nil || string(op.RequestBody.Content["application/json"].Schema) != string(schemaRef(rt.body))):
			t.Errorf("%s: body %v, want %s", key, op.RequestBody, rt.body)
		case rt.body != "" && doc.Components.Schemas[rt.body] == nil:
			t.Errorf("%s: no component schema %s", key, rt.body)
		}
		want := []string{string(rt.scope)}
		if rt.recordings {
			want = append(want, string(recordingsScope))
		}
		if rt.scope != "" && (len(op.Security) != 1 || !slices.Equal(op.Security[0]["bearer"], want)) {
			t.Errorf("%s: security %v, want scopes %v", key, op.Security, want)
		}
	}
	for path, item := range doc.Paths {
		for method := range item {
			if _, ok := routes[strings.ToUpper(method)+" "+path]; !ok && s.mcpPaths[path] == "" {
				t.Errorf("/openapi.json documents %s %s, which is not a route", method, path)
			}
		}
	}
	served := 0
	if err := chi.Walk(s.Router(), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served++
		if _, ok := routes[method+" "+pattern]; !ok {
			t.Errorf("the router serves %s %s, which is not in the route table", method, pattern)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if served != len(routes) {
		t.Errorf("the router serves %d routes, the table has %d", served, len(routes))
	}
}

// TestEnumsAreTheDomains: each enum a schema publishes lists exactly the
// values the domain accepts.
func TestEnumsAreTheDomains(t *testing.T) {
	strs := func(xs ...string) []string { return xs }
	choices := make([]string, len(gate.Choices))
	for i, c := range gate.Choices {
		choices[i] = string(c)
	}
	for _, c := range []struct {
		field  fields.Field
		domain []string
		valid  func(string) bool
	}{
		{fields.Dialect, strs(string(signature.Starlark), string(signature.PythonAsync)), func(v string) bool { _, err := signature.ParseDialect(v); return err == nil }},
		{fields.Phase, strs(string(audit.PhaseAutomatic), string(audit.PhaseInteractive)), func(v string) bool { return audit.Phase(v).Valid() }},
		{fields.Status, strs(string(procedures.StatusSucceeded), string(procedures.StatusFailed)), func(v string) bool { return procedures.Status(v).Valid() }},
		{fields.Choice, choices, func(v string) bool { return gate.Choice(v).Valid() }},
		{fields.Review, strs(string(gate.ReviewBlock), string(gate.ReviewAtCall)), func(v string) bool { return gate.Review(v).Valid() }},
	} {
		if !slices.Equal(c.field.Enum, c.domain) {
			t.Errorf("%s: the schema's enum %v, the domain's %v", c.field.Name, c.field.Enum, c.domain)
		}
		for _, v := range c.field.Enum {
			if !c.valid(v) {
				t.Errorf("%s: the domain refuses %q", c.field.Name, v)
			}
		}
	}
}
