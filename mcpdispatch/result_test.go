package mcpdispatch

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
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
		{"a text of other numbers is no twin", []mcp.Content{text(`{"id":9007199254741000,"ratio":0.1,"name":"job"}`)},
			map[string]any{"id": json.Number("9007199254740992"), "ratio": json.Number("0.1"), "name": "job"}},
		{"a text of more fields is no twin", []mcp.Content{text(`{"id":9007199254740993,"ratio":0.1,"name":"job","extra":[1]}`)},
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

// BenchmarkResult: a call's result made the sandbox's value, structured
// content alone, with its JSON text beside it (decoded once, its numbers
// exact, instead of the structured content encoded and decoded again), and
// with 60 KB of prose beside it (not decoded).
func BenchmarkResult(b *testing.B) {
	sc := map[string]any{}
	for i := range 20 {
		sc[fmt.Sprintf("job_%d", i)] = map[string]any{"id": float64(7_000_000_000 + i), "status": "failed", "site": "CERN"}
	}
	twin, _ := json.Marshal(sc)
	d := &Dispatcher{opts: Options{MaxResultBytes: 1 << 20}}
	for _, c := range []struct {
		name    string
		content []mcp.Content
	}{{"structured", nil}, {"structured+text", []mcp.Content{&mcp.TextContent{Text: string(twin)}}},
		{"structured+prose", []mcp.Content{&mcp.TextContent{Text: strings.Repeat("job 7000000001 failed at CERN\n", 2000)}}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			res := &mcp.CallToolResult{StructuredContent: sc, Content: c.content}
			for b.Loop() {
				if _, err := d.result("t", res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzExactTwin: any JSON text is the twin of its own float64 decoding (as
// the go-sdk hands structured content over), and what exactTwin returns
// for it decodes to that same value; a text of another value is never
// taken.
func FuzzExactTwin(f *testing.F) {
	for _, s := range []string{`{"id":9007199254740993}`, `[1,2.5,"x",null,true]`, `{"a":{"b":[1e400]}}`, `"s"`, `0.1`, `{"a":1,"a":2}`} {
		f.Add(s, `{"id":1}`)
	}
	f.Fuzz(func(t *testing.T, text, other string) {
		var sc any
		if json.Unmarshal([]byte(text), &sc) != nil {
			return
		}
		exact, ok := exactTwin([]mcp.Content{&mcp.TextContent{Text: text}}, sc, 1<<20)
		if !ok {
			if len(text) <= 1<<20 {
				t.Fatalf("%q is not the twin of its own decoding", text)
			}
			return
		}
		b, err := json.Marshal(exact)
		if err != nil {
			t.Fatal(err)
		}
		var back any
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, sc) {
			t.Fatalf("%q: the twin's value %s is not the structured content %#v", text, b, sc)
		}
		var o any
		if json.Unmarshal([]byte(other), &o) == nil && !reflect.DeepEqual(o, sc) {
			if _, ok := exactTwin([]mcp.Content{&mcp.TextContent{Text: other}}, sc, 1<<20); ok {
				t.Fatalf("%q was taken for the structured content of %q", other, text)
			}
		}
	})
}
