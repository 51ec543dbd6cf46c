package procedures

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestSchemaDiff: members added, removed and changed at their JSON
// pointers (escaped), arrays compared whole, long values cut, and at most
// maxSchemaChanges changes, the last saying how many more.
func TestSchemaDiff(t *testing.T) {
	was := map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "a/b": map[string]any{"type": "string"}, "gone": map[string]any{"type": "string"}}}
	now := map[string]any{"type": "object", "required": []any{"id", "limit"}, "properties": map[string]any{
		"id": map[string]any{"type": "string"}, "a/b": map[string]any{"type": "string", "maxLength": 3.0}, "limit": map[string]any{"type": "integer"}}}
	got := schemaDiff(was, now)
	want := []SchemaChange{
		{Path: "/properties/a~1b/maxLength", Change: schemaAdded, Now: "3"},
		{Path: "/properties/gone", Change: schemaRemoved, Was: `{"type":"string"}`},
		{Path: "/properties/id/type", Change: SchemaChanged, Was: `"integer"`, Now: `"string"`},
		{Path: "/properties/limit", Change: schemaAdded, Now: `{"type":"integer"}`},
		{Path: "/required", Change: SchemaChanged, Was: `["id"]`, Now: `["id","limit"]`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("schemaDiff =\n%+v\nwant\n%+v", got, want)
	}
	long := map[string]any{"description": strings.Repeat("é", 300)}
	if c := schemaDiff(map[string]any{}, long); len(c) != 1 || len(c[0].Now) > maxSchemaValueBytes+len("…") || !strings.HasSuffix(c[0].Now, "…") {
		t.Fatalf("a long value: %+v", c)
	}
	many := map[string]any{}
	for i := 0; i < 80; i++ {
		many[fmt.Sprintf("p%02d", i)] = i
	}
	c := schemaDiff(nil, many)
	if len(c) != maxSchemaChanges || c[len(c)-1].Change != schemaMore || c[len(c)-1].Now != "31 more changes" {
		t.Fatalf("80 changes: %d, last %+v", len(c), c[len(c)-1])
	}
}

// TestBaselineCheckSchemas: a baseline (from a dump) whose kept schema is
// not the one its hash names is refused: it would show a made-up earlier
// schema.
func TestBaselineCheckSchemas(t *testing.T) {
	tool := Tool{Name: "a", InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": "array"}}
	b := &Baseline{Tools: []ToolContract{ContractOf(tool)}}
	if why := b.Check([]string{"a"}); why != "" {
		t.Fatalf("its own baseline: %s", why)
	}
	b.Tools[0].InputSchema = map[string]any{"type": "string"}
	if why := b.Check([]string{"a"}); !strings.Contains(why, "input_schema") {
		t.Fatalf("a forged input schema: %q", why)
	}
	b = &Baseline{Tools: []ToolContract{ContractOf(tool)}}
	b.Tools[0].OutputSchema = map[string]any{"type": "object"}
	if why := b.Check([]string{"a"}); !strings.Contains(why, "output_schema") {
		t.Fatalf("a forged output schema: %q", why)
	}
}
