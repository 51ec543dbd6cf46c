package mcpdispatch

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStructuredNumbersExact: an upstream's structured content reaches
// the sandbox with its numbers exact when the server also sends it as JSON
// text (the go-sdk decodes structured content with float64 numbers, which
// rounds integers past 2^53); without that text the rounding stays.
func TestStructuredNumbersExact(t *testing.T) {
	t.Parallel()
	// As the go-sdk hands the client structured content: numbers float64.
	structured := func(text string) any {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	const exact = `{"id":9007199254740993,"ratio":0.1,"name":"job"}`
	text := func(s string) mcp.Content { return &mcp.TextContent{Text: s} }
	for _, c := range []struct {
		name    string
		content []mcp.Content
		want    map[string]any
	}{
		{"twin", []mcp.Content{text(exact)},
			map[string]any{"id": json.Number("9007199254740993"), "ratio": json.Number("0.1"), "name": "job"}},
		{"twin after a decoy", []mcp.Content{text(`{"decoy":true}`), &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}, text(exact)},
			map[string]any{"id": json.Number("9007199254740993"), "ratio": json.Number("0.1"), "name": "job"}},
		{"no twin: the structured content, rounded", []mcp.Content{text(`{"decoy":true}`)},
			map[string]any{"id": json.Number("9007199254740992"), "ratio": json.Number("0.1"), "name": "job"}},
		{"a text of another value is no twin", []mcp.Content{text(`{"id":9007199254740993,"ratio":0.1,"name":"other"}`)},
			map[string]any{"id": json.Number("9007199254740992"), "ratio": json.Number("0.1"), "name": "job"}},
		{"no content", nil,
			map[string]any{"id": json.Number("9007199254740992"), "ratio": json.Number("0.1"), "name": "job"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Dispatcher{opts: Options{MaxResultBytes: 1 << 20}}
			got, err := d.result("t", &mcp.CallToolResult{StructuredContent: structured(exact), Content: c.content})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
}
