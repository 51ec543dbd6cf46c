package main

import (
	"testing"
)

// TestIdempotencyKeyOneRule: the Idempotency-Key header, a usage key the
// stores build others from, follows the key rule session_id follows
// (fields: UTF-8, at most 512 bytes, no C0, DEL or C1 control character)
// on capture and invoke: Go's server passes a tab, C1 controls and bytes
// that are not UTF-8 in a header, and each is refused as 400
// invalid_request naming the header, with nothing captured, counted or run.
func TestIdempotencyKeyOneRule(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	mustCaptureName(t, s, readOnlyCode, "setup")
	before := mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
	invoke := "/v1/procedures/" + readOnlyName + "/invoke"
	for name, key := range map[string]string{
		"tab":           "k\tk",
		"C1 NEL":        "k\u0085k",
		"C1 CSI":        "k\u009b2Jk",
		"not UTF-8":     "k\xffk",
		"only controls": "\u0085",
	} {
		t.Run(name, func(t *testing.T) {
			for _, q := range []req{
				{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": readOnlyCode}},
				{Method: "POST", Path: invoke, Body: map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 1}}},
			} {
				q.Header = map[string]string{"Idempotency-Key": key}
				d := mustError(t, s.send(t, q), 400, "invalid_request")
				if d["field"] != "Idempotency-Key" {
					t.Fatalf("%s: details %v, want field Idempotency-Key", q.Path, d)
				}
			}
		})
	}
	up.mustSeeNothing(t, "requests with a control character in Idempotency-Key")
	if ds := s.decisions(t, "kind=invoke"); len(ds) != 0 {
		t.Fatalf("a refused invoke was decided: %v", ds)
	}
	after := mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
	if after["frequency"] != before["frequency"] || after["use_count"] != before["use_count"] {
		t.Fatalf("a refused request was counted: %v -> %v", before, after)
	}
	// A key of printable text, spaces and non-ASCII letters is a key.
	q := req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": readOnlyCode}, Header: map[string]string{"Idempotency-Key": "run 42 · é"}}
	mustStatus(t, s.send(t, q), 200)
}
