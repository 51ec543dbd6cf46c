package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// liftCatalogue types get_jobs' task_id, as an agent's tool server does.
var liftCatalogue = []procedures.Tool{
	{Name: "get_jobs", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"task_id": map[string]any{"type": "integer"}}}},
	{Name: "fetch_logs", ReadOnly: true},
}

// TestCaptureLiftsOverHTTP: a capture over HTTP lifts a typed literal,
// names it in the answer, stores it required (an invoke without it is
// refused: no silent reuse of the captured value), and "lift": false keeps
// the code as written; a turn runs its code as written and only its
// capture is lifted.
func TestCaptureLiftsOverHTTP(t *testing.T) {
	e := mustEnv(t, envOpts{})
	if _, err := e.svc.PutCatalogue(context.Background(), liftCatalogue, "tester"); err != nil {
		t.Fatal(err)
	}
	c := http.DefaultClient
	code := "jobs = tools.get_jobs(task_id=42)\nreturn tools.fetch_logs(jobs=jobs)\n"
	st, data := e.do(t, c, "POST", "/v1/procedures", map[string]any{"code": code, "session_id": "s1"})
	if st != http.StatusCreated {
		t.Fatalf("capture: %d %s", st, data)
	}
	var out struct {
		Procedure procedures.Procedure `json:"procedure"`
		Lifted    []procedures.Lifted  `json:"lifted"`
		Warnings  []procedures.Warning `json:"warnings"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Lifted) != 1 || out.Lifted[0].Parameter != "task_id" || out.Lifted[0].Line != 1 || out.Lifted[0].Column != 31 ||
		out.Lifted[0].Example != float64(42) || out.Procedure.Code != strings.Replace(code, "42", "task_id", 1) {
		t.Fatalf("answer %s", data)
	}
	path := "/v1/procedures/" + out.Procedure.Name + "/invoke"
	if st, data := e.do(t, c, "POST", path, map[string]any{"phase": "automatic"}); st != http.StatusUnprocessableEntity || !strings.Contains(string(data), "task_id") {
		t.Fatalf("invoke without the lifted argument: %d %s", st, data)
	}
	if st, data := e.do(t, c, "POST", path, map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": "43"}}); st != http.StatusUnprocessableEntity {
		t.Fatalf("invoke with a string for an integer: %d %s", st, data)
	}
	if st, data := e.do(t, c, "POST", path, map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 43}}); st != http.StatusOK {
		t.Fatalf("invoke: %d %s", st, data)
	}

	st, data = e.do(t, c, "POST", "/v1/procedures", map[string]any{"code": code, "session_id": "s2", "lift": false})
	if st != http.StatusOK || !strings.Contains(string(data), `"lifted":[]`) || !strings.Contains(string(data), `"version_created":true`) {
		t.Fatalf("lift false: %d %s", st, data)
	}
	if st, data := e.do(t, c, "POST", "/v1/procedures", map[string]any{"code": code, "lift": "no"}); st != http.StatusBadRequest {
		t.Fatalf("lift not a boolean: %d %s", st, data)
	}

	turn := "jobs = tools.get_jobs(task_id=7)\nreturn tools.fetch_logs(jobs=jobs, n=1)\n"
	st, data = e.do(t, c, "POST", "/v1/turns", map[string]any{"code": turn, "session_id": "t1", "phase": "automatic", "capture": map[string]any{"summary": "x"}})
	if st != http.StatusOK {
		t.Fatalf("turn: %d %s", st, data)
	}
	var ta struct {
		Turn struct {
			CodeHash string `json:"code_hash"`
		} `json:"turn"`
		Procedure procedures.Procedure `json:"procedure"`
		Lifted    []procedures.Lifted  `json:"lifted"`
		Result    any                  `json:"result"`
	}
	if err := json.Unmarshal(data, &ta); err != nil {
		t.Fatal(err)
	}
	if len(ta.Lifted) != 1 || !strings.Contains(ta.Procedure.Code, "task_id=task_id") || ta.Turn.CodeHash != signature.CodeHash(turn) ||
		ta.Procedure.CodeHash == ta.Turn.CodeHash {
		t.Fatalf("turn capture: %s", data)
	}
}
