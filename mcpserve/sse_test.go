package mcpserve

import (
	"io"
	"strings"
	"testing"
)

// TestPrimingEventIsUnnamed: a 2025-11-25 request answered as SSE starts
// with the specification's priming event (an id and empty data) and names
// no event type a client does not know ("prime": the official Python SDK
// warned on every request).
func TestPrimingEventIsUnnamed(t *testing.T) {
	e := newEnv(t, false)
	body := strings.Replace(initializeBody, "2025-06-18", "2025-11-25", 1)
	resp := e.post(t, "/mcp", "tok-reader", "", body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("initialize: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	raw, _ := io.ReadAll(resp.Body)
	events := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	if len(events) < 2 {
		t.Fatalf("want a priming event and the answer, got:\n%s", raw)
	}
	if prime := events[0]; !strings.HasPrefix(prime, "id: ") || !strings.HasSuffix(prime, "\ndata: ") {
		t.Errorf("the first event is not an id with empty data: %q", prime)
	}
	for _, ev := range events {
		for _, line := range strings.Split(ev, "\n") {
			if strings.HasPrefix(line, "event:") && line != "event: message" {
				t.Errorf("an event of type %q: %q", strings.TrimSpace(strings.TrimPrefix(line, "event:")), ev)
			}
		}
	}
	if !strings.Contains(events[len(events)-1], `"protocolVersion":"2025-11-25"`) {
		t.Errorf("the answer is not the initialize result: %q", events[len(events)-1])
	}
}
