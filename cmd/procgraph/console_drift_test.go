package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleDrift: in a real headless Chromium, a catalogue change that
// changes a tool's input schema shows the procedure as stale (a badge on
// its page and in the list, what changed, each version's drift) and on the
// drift page, where accepting it with a reason (the grant scope, as the
// console's token has) clears it.
func TestConsoleDrift(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	s := mustServe(t, serverOpts{})
	s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": "d"}, nil)
	var cat map[string]any
	s.get(t, "/v1/tools").Into(t, &cat)
	tools := cat["tools"].([]any)
	for _, tl := range tools {
		if m := tl.(map[string]any); m["name"] == "get_retry_chain" {
			m["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}}}
			delete(m, "schema_hash")
		}
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": tools}}), 200)

	tab.open(t, s.URL, "#/procedure/"+readOnlyName)
	if tab.count(t, "#stale-badge") != 1 || !strings.Contains(tab.text(t, "#drift"), "get_retry_chain: input_schema") {
		t.Fatalf("the procedure page shows no drift:\n%s", tab.text(t, "#view"))
	}
	tab.screenshot(t, "drift-procedure")
	tab.open(t, s.URL, "#/procedures")
	if !strings.Contains(tab.text(t, "#procedures"), "stale") {
		t.Fatalf("the list shows no stale badge:\n%s", tab.text(t, "#procedures"))
	}
	tab.open(t, s.URL, "#/drift")
	if got := tab.text(t, "#drift tbody"); !strings.Contains(got, readOnlyName) || !strings.Contains(got, "get_retry_chain: input_schema") ||
		!strings.Contains(tab.text(t, "#drift-total"), "1 stale version") {
		t.Fatalf("the drift page:\n%s", tab.text(t, "#view"))
	}
	tab.mustClean(t, "drift")
	tab.screenshot(t, "drift")
	tab.run(t, chromedp.Click("#drift button.accept-drift", chromedp.ByQuery))
	tab.waitJS(t, `document.querySelector('#drift .drift-result [role=alert]') !== null`)
	tab.run(t, chromedp.SendKeys("#drift .drift-reason", "string ids are fine", chromedp.ByQuery),
		chromedp.Click("#drift button.accept-drift", chromedp.ByQuery))
	tab.waitJS(t, `(document.getElementById('drift-total') || {}).textContent === '0 stale versions'`)
	if got := tab.text(t, "#notice"); !strings.Contains(got, "Drift accepted") || !strings.Contains(got, "string ids are fine") {
		t.Fatalf("no confirmation of the accept: %q", got)
	}
	var p map[string]any
	s.get(t, "/v1/procedures/"+readOnlyName).Into(t, &p)
	if p["stale"] != false {
		t.Fatalf("after accepting from the page: stale %v", p["stale"])
	}
}
