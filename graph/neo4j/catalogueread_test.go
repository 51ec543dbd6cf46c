package neo4j

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestCaptureSeesCatalogueOfAnyInstance: a capture lifts with the
// catalogue stored when it is written, not the one its instance read last
// (issue 35 item 8). Two instances of the HTTP API on one database, each
// holding the catalogue it read with a first capture: the instance that
// put a catalogue captures at once after its PUT answered, and so does the
// other one, and both lift the literal the new catalogue types.
func TestCaptureSeesCatalogueOfAnyInstance(t *testing.T) {
	var seen []string
	a := serviceOver(t, freshStore(t), &seen)
	b := serviceOver(t, openStore(t), &seen)
	capture := func(hs *httptest.Server, code string) map[string]any {
		t.Helper()
		status, out := call(t, hs, "POST", "/v1/procedures", map[string]any{"code": code})
		if status != 200 && status != 201 {
			t.Fatalf("capture: status %d: %v", status, out)
		}
		return out
	}
	put := func(tools ...any) {
		t.Helper()
		if status, out := call(t, a, "PUT", "/v1/tools", map[string]any{"tools": tools}); status != 200 {
			t.Fatalf("PUT /v1/tools: %d %v", status, out)
		}
	}
	lifted := func(out map[string]any, want bool) {
		t.Helper()
		p := out["procedure"].(map[string]any)
		l, _ := out["lifted"].([]any)
		params, _ := p["parameters"].([]any)
		if (len(l) == 1) != want || (len(params) == 1) != want {
			t.Fatalf("lifted %v, parameters %v; want lifted: %v\n%v", l, params, want, out)
		}
	}
	tool := func(name string, typed bool) any {
		schema := map[string]any{"type": "object"}
		if typed {
			schema["properties"] = map[string]any{"task_id": map[string]any{"type": "integer"}}
		}
		return map[string]any{"name": name, "read_only": true, "input_schema": schema}
	}
	catalogue := func(typed ...string) {
		t.Helper()
		var tools []any
		for _, name := range []string{"t1", "t2", "t3", "t4", "t5"} {
			tools = append(tools, tool(name, slices.Contains(typed, name)))
		}
		put(tools...)
	}
	catalogue()
	// Each instance reads (and holds) the catalogue where nothing is typed.
	lifted(capture(a, "return tools.t1(task_id=1)\n"), false)
	lifted(capture(b, "return tools.t2(task_id=1)\n"), false)

	// Instance A puts a catalogue typing t3's task_id and captures at once.
	catalogue("t3")
	lifted(capture(a, "return tools.t3(task_id=42)\n"), true)
	// Instance B captures right after A's PUT answered: a new version of
	// a procedure it captured before, then a new procedure after the next PUT.
	catalogue("t2", "t3")
	again := capture(b, "r = tools.t2(task_id=42)\nreturn r\n")
	if l, _ := again["lifted"].([]any); len(l) != 1 {
		t.Fatalf("a new version of an existing procedure did not lift: %v", again)
	}
	if v, _ := again["version"].(map[string]any); v["current"] != false || fmt.Sprint(v["parameters"]) != "[task_id]" {
		t.Fatalf("the new version: %v, want a version (not current) with parameter task_id", v)
	}
	catalogue("t2", "t3", "t4", "t5")
	lifted(capture(b, "return tools.t4(task_id=42)\n"), true)
	// And the change back is seen as well.
	catalogue()
	lifted(capture(b, "return tools.t5(task_id=42)\n"), false)
}
