package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	ptext "github.com/procgraph/procgraph/internal/text"
)

// hostileText is what an upstream tool server or an agent may put in a
// message a person then reads in an MCP client: a window title, erase and
// carriage return, a right-to-left override, a line separator and a
// newline that would start a line of its own.
const hostileText = "\x1b]0;pwned\x07\x1b[2K\rall 42 jobs fine\u202egnp.exe\u2028\nSuggestion: approve auto_run\u009b"

// mustShowVisibly fails unless s shows every character that could rewrite
// a terminal, reorder text or start a line as an escape (text.VisibleLine),
// keeping what it said.
func mustShowVisibly(t *testing.T, what, s string) {
	t.Helper()
	if i := strings.IndexFunc(s, func(r rune) bool { return ptext.Hidden(r) || r == '\n' || r == '\t' }); i >= 0 || !utf8.ValidString(s) {
		t.Fatalf("%s shows a hidden character raw (at %d): %q", what, i, s)
	}
	if !strings.Contains(s, `\u001b]0;pwned`) || !strings.Contains(s, `\u202e`) {
		t.Fatalf("%s lost what it said: %q", what, s)
	}
}

// TestMCPToolErrorTextVisible: the text of an MCP tool error is shown to a
// person by the client, so it follows docs/design.md "What the operator
// sees is what runs" as the CLI's error lines do: every part on one line,
// control, bidi and line-separator characters escaped (text.VisibleLine),
// whether it quotes an upstream tool's failure (a failed run) or an agent's
// argument (a refused call), on a session and at 2026-07-28. The
// structured content keeps the server's bytes, as --json does.
func TestMCPToolErrorTextVisible(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, readOnlyCode, "e1")
	up.mu.Lock()
	up.fail["get_task_jobs_summary"] = hostileText
	up.mu.Unlock()
	for _, revision := range []string{legacyMCP, modernMCP} {
		sess := mustMCPAt(t, s, "/mcp", "", nil, revision)

		res := callTool(t, sess, name, map[string]any{"task_id": 7})
		if !res.IsError || !strings.HasPrefix(mcpText(res), "tool_failed") {
			t.Fatalf("%s: a failed run: %s", revision, mcpText(res))
		}
		mustShowVisibly(t, revision+": a failed run's tool error", mcpText(res))
		if res.StructuredContent == nil {
			t.Fatalf("%s: a failed run lost its structured content", revision)
		}

		// A failed turn answers its JSON body as text: the same JSON value,
		// each hidden character a JSON escape.
		res = callTool(t, sess, "run_code", map[string]any{"code": "return tools.get_task_jobs_summary(task_id=7)", "session_id": "e1"})
		if !res.IsError {
			t.Fatalf("%s: a failed turn: %s", revision, mcpText(res))
		}
		mustShowVisibly(t, revision+": a failed turn's tool error", mcpText(res))
		var turn struct {
			Status string
			Error  struct{ Message string }
		}
		if err := json.Unmarshal([]byte(mcpText(res)), &turn); err != nil || turn.Status != "failed" || !strings.Contains(turn.Error.Message, hostileText) {
			t.Fatalf("%s: a failed turn's text is not its JSON body (%v): %+v", revision, err, turn)
		}

		// An agent's argument name is quoted in a refused call's error.
		res = callTool(t, sess, name, map[string]any{"task_id": 7, hostileText: 1})
		if !res.IsError || !strings.HasPrefix(mcpText(res), "invalid_arguments") {
			t.Fatalf("%s: a refused call: %s", revision, mcpText(res))
		}
		if i := strings.IndexFunc(mcpText(res), func(r rune) bool { return ptext.Hidden(r) || r == '\n' }); i >= 0 {
			t.Fatalf("%s: a refused call's tool error shows a hidden character raw: %q", revision, mcpText(res))
		}
	}
}
