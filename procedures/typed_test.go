package procedures_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/signature"
)

func TestTypedSchema(t *testing.T) {
	intID := map[string]any{"type": "integer", "description": "PanDA task id"}
	cat := mustCatalogue(t, []procedures.Tool{
		{Name: "a", InputSchema: obj(map[string]any{"task_id": intID, "n": map[string]any{"type": "integer", "minimum": 1}})},
		{Name: "b", InputSchema: obj(map[string]any{"id": map[string]any{"type": "integer"}, "max": map[string]any{"type": "number", "maximum": 10}})},
		{Name: "c", InputSchema: obj(map[string]any{"task_id": map[string]any{"type": "string"}, "mode": map[string]any{"enum": []any{"x", "y"}}})},
		{Name: "r", InputSchema: obj(map[string]any{"ref": map[string]any{"$ref": "#/$defs/x"}})},
	})
	flow := func(param, tool, kw string, line int) signature.Flow {
		return signature.Flow{Parameter: param, Tool: tool, Keyword: kw, Line: line, Column: 1}
	}
	cases := []struct {
		name     string
		params   []string
		supplied map[string]any
		flows    []signature.Flow
		want     map[string]any // the properties
		warning  string
	}{
		{"one tool", []string{"t"}, nil, []signature.Flow{flow("t", "a", "task_id", 1)},
			map[string]any{"t": intID}, ""},
		{"no description gets where it goes", []string{"t"}, nil, []signature.Flow{flow("t", "b", "id", 1)},
			map[string]any{"t": map[string]any{"type": "integer", "description": "Passed to b as id."}}, ""},
		{"same schema twice is taken once", []string{"t"}, nil,
			[]signature.Flow{flow("t", "a", "task_id", 1), flow("t", "b", "id", 2)},
			map[string]any{"t": map[string]any{"type": "integer", "description": "PanDA task id"}}, ""},
		{"compatible schemas intersect", []string{"n"}, nil,
			[]signature.Flow{flow("n", "a", "n", 1), flow("n", "b", "max", 2)},
			map[string]any{"n": map[string]any{"type": "integer", "description": "Passed to a as n and b as max.",
				"allOf": []any{map[string]any{"type": "integer", "minimum": 1}, map[string]any{"type": "number", "maximum": 10}}}}, ""},
		{"conflict stays permissive with a warning", []string{"t"}, nil,
			[]signature.Flow{flow("t", "a", "task_id", 1), flow("t", "c", "task_id", 3)},
			map[string]any{"t": map[string]any{}}, "parameter t is passed to tools whose schemas declare conflicting types (a as task_id, c as task_id)"},
		{"enum without a type", []string{"m"}, nil, []signature.Flow{flow("m", "c", "mode", 1)},
			map[string]any{"m": map[string]any{"enum": []any{"x", "y"}, "description": "Passed to c as mode."}}, ""},
		{"params_schema wins", []string{"t"}, obj(map[string]any{"t": map[string]any{"type": "string"}}),
			[]signature.Flow{flow("t", "a", "task_id", 1)},
			map[string]any{"t": map[string]any{"type": "string"}}, ""},
		{"unknown tool and undeclared property add nothing", []string{"t", "u"}, nil,
			[]signature.Flow{flow("t", "gone", "task_id", 1), flow("u", "a", "nope", 2)},
			map[string]any{"t": map[string]any{}, "u": map[string]any{}}, ""},
		{"a $ref is not moved", []string{"t"}, nil, []signature.Flow{flow("t", "r", "ref", 1)},
			map[string]any{"t": map[string]any{}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stored, err := schemas.InputSchema(c.params, c.supplied)
			if err != nil {
				t.Fatal(err)
			}
			before := schemas.SchemaKey(stored)
			got, warnings := procedures.TypedSchema(stored, c.params, c.flows, cat)
			if schemas.SchemaKey(stored) != before {
				t.Fatal("TypedSchema modified the stored schema")
			}
			if !reflect.DeepEqual(got["properties"], c.want) {
				t.Errorf("properties = %s, want %s", schemas.SchemaKey(got["properties"].(map[string]any)), schemas.SchemaKey(c.want))
			}
			if _, err := schemas.CompileSchema(got); err != nil {
				t.Errorf("typed schema does not compile: %v", err)
			}
			switch {
			case c.warning == "" && len(warnings) > 0:
				t.Errorf("warnings = %+v", warnings)
			case c.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0].Message, c.warning)):
				t.Errorf("warnings = %+v, want one with %q", warnings, c.warning)
			}
		})
	}
}

// TestTypedCompareLogs: the example compare_logs (examples/) passes task_id to
// three tools that declare it an integer: its schema says so, and follows
// the current catalogue (a change to the catalogue retypes it).
func TestTypedCompareLogs(t *testing.T) {
	ctx := context.Background()
	svc, _ := newServiceStore(t, false)
	var file struct {
		Tools []procedures.Tool `json:"tools"`
	}
	b, err := os.ReadFile("../examples/catalogue.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PutCatalogue(ctx, file.Tools, "tester"); err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile("../examples/procedures/compare_logs.star")
	if err != nil {
		t.Fatal(err)
	}
	out := mustCapture(t, svc, procedures.CaptureRequest{Code: string(code), Dialect: "starlark", Status: procedures.StatusSucceeded, SessionID: "s"})
	taskID := func(p *procedures.Procedure) map[string]any {
		t.Helper()
		props, _ := p.InputSchema["properties"].(map[string]any)
		s, _ := props["task_id"].(map[string]any)
		return s
	}
	if s := taskID(out.Procedure); s["type"] != "integer" || s["description"] == "" {
		t.Fatalf("capture's task_id = %v", s)
	}
	p, err := svc.Get(ctx, out.Procedure.Name)
	if err != nil {
		t.Fatal(err)
	}
	if s := taskID(p); s["type"] != "integer" || !strings.Contains(s["description"].(string), "find_similar_successful_tasks") {
		t.Fatalf("Get's task_id = %v", s)
	}
	// The catalogue now declares one of the three as a string: a conflict.
	for i := range file.Tools {
		if file.Tools[i].Name == "get_failed_job_log_summary" {
			file.Tools[i].InputSchema = obj(map[string]any{"task_id": map[string]any{"type": "string"}})
		}
	}
	if _, err := svc.PutCatalogue(ctx, file.Tools, "tester"); err != nil {
		t.Fatal(err)
	}
	p, err = svc.Get(ctx, out.Procedure.Name)
	if err != nil {
		t.Fatal(err)
	}
	if s := taskID(p); len(s) != 0 {
		t.Fatalf("task_id after a conflicting catalogue = %v, want {}", s)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Message, "conflicting types") {
		t.Fatalf("warnings = %+v", p.Warnings)
	}
}

func obj(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props}
}

func mustCatalogue(t *testing.T, tools []procedures.Tool) *procedures.Catalogue {
	t.Helper()
	c, err := procedures.NewCatalogue(tools)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTypedSchemaFollowsTheCatalogue: a parameter is typed from the
// catalogue it is typed under, not from one that held the same tool
// before (the tools' property schemas are kept by catalogue revision).
func TestTypedSchemaFollowsTheCatalogue(t *testing.T) {
	flows := []signature.Flow{{Parameter: "t", Tool: "a", Keyword: "task_id", Line: 1, Column: 1}}
	for _, want := range []map[string]any{
		{"type": "integer", "description": "PanDA task id"},
		{"type": "string", "description": "PanDA task name"},
		{"type": "integer", "minimum": 1, "description": "Passed to a as task_id."},
	} {
		prop := map[string]any{}
		for k, v := range want {
			if v != "Passed to a as task_id." {
				prop[k] = v
			}
		}
		cat := mustCatalogue(t, []procedures.Tool{{Name: "a", InputSchema: obj(map[string]any{"task_id": prop})}})
		got, _ := procedures.TypedSchema(nil, []string{"t"}, flows, cat)
		if p := got["properties"].(map[string]any)["t"]; !reflect.DeepEqual(p, want) {
			t.Fatalf("under %s: t is %v, want %v", cat.Revision, p, want)
		}
	}
}
