package mcpserve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestJSONResultSentOnce: an object is sent once in full as structured
// content (its JSON as the text too only while small), anything else as
// text alone, and a result whose message would pass MaxMessage is a tool
// error of class result_too_large, never a message the SDKs refuse.
func TestJSONResultSentOnce(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name       string
		v          any
		meta       mcp.Meta
		tooLarge   bool
		structured bool
		textIsJSON bool
	}{
		{"small object", map[string]any{"a": 1}, nil, false, true, true},
		{"object at the inline bound", map[string]any{"p": pad(InlineText - 8)}, nil, false, true, true},
		{"large object", map[string]any{"a": 1, "pad": pad(600 << 10)}, nil, false, true, false},
		{"large array", []any{pad(600 << 10)}, nil, false, false, true},
		{"object over the message bound", map[string]any{"pad": pad(MaxMessage)}, nil, true, false, false},
		{"object whose _meta takes it over", map[string]any{"pad": pad(MaxMessage - 200)}, mcp.Meta{"procgraph/output": pad(400)}, true, false, false},
		{"array whose escaping takes it over", []any{strings.Repeat("\x01", MaxMessage/4)}, nil, true, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := jsonResult(tc.v, tc.meta)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if len(msg) > MaxMessage {
				t.Fatalf("the result's message is %d bytes, over %d", len(msg), MaxMessage)
			}
			if res.IsError != tc.tooLarge {
				t.Fatalf("IsError %v, want %v", res.IsError, tc.tooLarge)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if tc.tooLarge {
				if !strings.HasPrefix(text, "result_too_large: ") || res.Meta[MetaErrorCode] != "result_too_large" {
					t.Fatalf("a result too large: %q %v", text, res.Meta)
				}
				return
			}
			full, _ := json.Marshal(tc.v)
			if got := res.StructuredContent != nil; got != tc.structured {
				t.Fatalf("structured content %v, want %v", got, tc.structured)
			}
			if tc.structured && string(res.StructuredContent.(json.RawMessage)) != string(full) {
				t.Fatal("the structured content is not the result")
			}
			if got := text == string(full); got != tc.textIsJSON {
				t.Fatalf("text is the JSON: %v, want %v (text %.80q)", got, tc.textIsJSON, text)
			}
			if !tc.textIsJSON && (len(text) > 300 || !strings.Contains(text, "structured content") || !strings.Contains(text, "pad")) {
				t.Fatalf("the summary: %q", text)
			}
		})
	}
}
