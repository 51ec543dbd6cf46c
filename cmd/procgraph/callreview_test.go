package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPausedCallShown: the call a turn paused at is printed first — its
// tool, its arguments as evaluated, its schema hash — then the code with
// the stopping line marked and the reads so far; a hostile argument or
// response (an escape sequence, a bidirectional override, a line
// separator, a newline) is shown as escapes, never raw; arguments the
// server did not send (no grant scope) are said to be hidden.
func TestPausedCallShown(t *testing.T) {
	const hostile = "\x1b[2J\u202eevil\u2028\nline"
	args, _ := json.Marshal(map[string]any{"text": hostile})
	resp := `{"n":3,"note":"` + "\x1b[2J\u202eevil\u2028" + `\nline"}`
	c := &pausedCall{Position: 1, Line: 2, Tool: "record_note", SchemaHash: "sh", ArgsDigest: "dg", Arguments: args}
	code := "r = tools.search_panda_docs(query=q)\ntools.record_note(text=r[\"note\"])\nreturn r\n"
	reads := []pausedRead{{Tool: "search_panda_docs", Arguments: json.RawMessage(`{"query":"x"}`), Response: resp, Truncated: true, Bytes: 9000}}
	var b strings.Builder
	printPausedCall(&b, c, code, reads)
	out := b.String()
	t.Logf("\n%s", out)
	if strings.ContainsAny(out, "\x1b\u202e\u2028") {
		t.Fatalf("a hidden character printed raw:\n%q", out)
	}
	for _, want := range []string{
		"call:        tools.record_note (call 2 of the run, line 2)",
		`arguments:   {"text":"\u001b[2J\u202eevil\u2028\nline"}`,
		"schema hash: sh",
		"> 2  tools.record_note(text=r[\"note\"])",
		"  1  r = tools.search_panda_docs(query=q)",
		`1. tools.search_panda_docs {"query":"x"}`,
		`-> {"n":3,"note":"\u001b[2J\u202eevil\u2028\nline"} (truncated: `,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "tools.record_note (call") > strings.Index(out, "r = tools.search") {
		t.Fatalf("the call is not first:\n%s", out)
	}
	c.Arguments = nil
	b.Reset()
	printPausedCall(&b, c, code, nil)
	if !strings.Contains(b.String(), "arguments:   not shown: the grant scope reads them (digest dg)") {
		t.Fatalf("arguments not sent:\n%s", b.String())
	}
}
