package mcpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/answer"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	ptext "github.com/procgraph/procgraph/internal/text"
)

// Result sizes: what one answer may carry. The official SDKs read a
// streamable HTTP answer as server-sent events and refuse an event over
// 1 MiB (the Python SDK: "Server-sent event exceeded the 1048576 byte
// limit"), so a result is sent once in full and the whole message stays
// under MaxMessage (docs/mcp.md "Results").
const (
	// MaxMessage bounds the JSON of a result's content, structured
	// content and _meta together: 1 MiB less room for the JSON-RPC
	// envelope and the event's framing.
	MaxMessage = 1<<20 - 32<<10
	// InlineText is the size up to which an object result's JSON is also
	// its text content; above it the text is a one-line summary and the
	// object is in the structured content alone.
	InlineText = 16 << 10
)

// jsonResult answers v as JSON: an object as structured content, with its
// JSON as the text too when it is small (InlineText) and a summary when it
// is not; anything else as JSON text alone (older MCP clients accept only
// objects as structured content). A result whose message would pass
// MaxMessage is a tool error of class result_too_large (resultTooLarge).
func jsonResult(v any, meta mcp.Meta) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the result does not encode as JSON")
	}
	metaSize := 0
	if len(meta) > 0 {
		m, err := json.Marshal(meta)
		if err != nil {
			return nil, fmt.Errorf("the result's _meta does not encode as JSON")
		}
		metaSize = len(m)
	}
	res := &mcp.CallToolResult{Meta: meta}
	text, structured := string(b), 0
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		res.StructuredContent, structured = json.RawMessage(b), len(b)
		if len(b) > InlineText {
			text = summary(t)
		}
	}
	// The text travels as a JSON string: its escaped size is what counts.
	sent := metaSize + structured
	if quoted, err := json.Marshal(text); err == nil {
		sent += len(quoted)
	}
	if sent > MaxMessage {
		return resultTooLarge(sent), nil
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return res, nil
}

// summary is the text of a large object result: its size and first keys,
// pointing at the structured content that holds it.
func summary(object []byte) string {
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(object))
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		for dec.More() && len(keys) < 8 {
			k, err := dec.Token()
			ks, ok := k.(string)
			if err != nil || !ok {
				break
			}
			keys = append(keys, ptext.VisibleLine(ks))
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
		}
	}
	more := ""
	if dec.More() {
		more = ", …"
	}
	return fmt.Sprintf("The result is a JSON object of %d bytes (keys: %s%s), sent once as this tool result's structured content.",
		len(object), strings.Join(keys, ", "), more)
}

// resultTooLarge is the tool error of a result whose message would be
// sent bytes, over MaxMessage.
func resultTooLarge(sent int) *mcp.CallToolResult {
	msg := fmt.Sprintf("the result would make an MCP message of %d bytes, over the %d that one message may carry", sent, MaxMessage)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "result_too_large", "message": msg, "details": map[string]any{"bytes": sent, "limit": MaxMessage}}})
	return &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{MetaErrorCode: "result_too_large"},
		Content: []mcp.Content{&mcp.TextContent{Text: "result_too_large: " + msg}}, StructuredContent: json.RawMessage(b)}
}

// toolError answers err as a tool error (see answer.Of: an internal
// error's text never reaches the client): the text starts with the code
// (and the reason, for a denial or a conflict), shown as errorText shows
// it, and the structured content is the HTTP API's error body.
func (h *Handler) toolError(err error) *mcp.CallToolResult {
	a := answer.Of(err)
	if a.ServerFault() {
		h.log.Error().Err(err).Str("code", string(a.Code)).Msg("mcp: tool call failed")
	}
	text := string(a.Code)
	if reason := reasonOf(err, a.Details); reason != "" {
		text += " (" + reason + ")"
	}
	text += ": " + a.Message
	if s, ok := a.Details["suggestion"].(string); ok && s != "" {
		text += " Suggestion: " + s
	}
	if errs, ok := a.Details["errors"]; ok {
		if b, err := json.Marshal(errs); err == nil {
			text += " Errors: " + string(b)
		}
	}
	b, merr := json.Marshal(a.Body())
	if merr != nil {
		b = []byte(`{"error":{"code":"internal","message":"internal error","details":{}}}`)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: errorText(text)}}, StructuredContent: json.RawMessage(b)}
}

// errorText is a tool error's text as the client shows it to a person:
// one line, each character that could rewrite a terminal, reorder the text
// or start a line of its own escaped (text.VisibleLine), as the CLI shows
// an error; it may quote what an upstream tool or an agent wrote
// (docs/design.md "What the operator sees is what runs"). The structured
// content keeps the server's bytes.
func errorText(s string) string { return ptext.VisibleLine(s) }

// reasonOf is the reason of a denial (its decision's) or of a conflict.
func reasonOf(err error, details map[string]any) string {
	if d, ok := audit.DecisionOf(err); ok && d.Reason != "" {
		return d.Reason
	}
	if r, ok := details["reason"].(string); ok {
		return r
	}
	return ""
}

// decodeArguments decodes a call's arguments: a JSON object or nothing.
// Numbers stay json.Number (jsonvalue.DecodeNumbers), so integers keep
// their precision.
func decodeArguments(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	x, err := jsonvalue.DecodeNumbers(raw)
	args, ok := x.(map[string]any)
	if err != nil || !ok {
		return nil, fault.Errorf(fault.CodeInvalid, "the arguments must be a JSON object").WithDetails("field", "arguments")
	}
	return args, nil
}

// oneLine shortens s for a log line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
