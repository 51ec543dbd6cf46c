package main

import "testing"

// TestCaptureSuggestionOverHTTP: the capture answer names the exposed
// procedure to call instead, and is null when there is none.
func TestCaptureSuggestionOverHTTP(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	first := s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": "a"}, nil)
	if v, ok := first["suggestion"]; !ok || v != nil {
		t.Fatalf("the creating capture: suggestion %v (present %v), want null", v, ok)
	}
	name := first["procedure"].(map[string]any)["name"].(string)
	again := s.mustCapture(t, map[string]any{"code": "return tools.get_retry_chain(task_id=t)", "session_id": "b"}, nil)
	sug, _ := again["suggestion"].(map[string]any)
	if sug == nil || sug["tool"] != name || sug["reason"] != "covered_by" || sug["message"] == "" {
		t.Fatalf("suggestion %v, want %s covered_by", again["suggestion"], name)
	}
}
