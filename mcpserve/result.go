package mcpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/answer"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
)

// jsonResult answers v as JSON text and, when v is a JSON object, as
// structured content too (older MCP clients accept only objects there).
func jsonResult(v any, meta mcp.Meta) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the result does not encode as JSON")
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, Meta: meta}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		res.StructuredContent = json.RawMessage(b)
	}
	return res, nil
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
	if d, ok := procedures.DecisionOf(err); ok && d.Reason != "" {
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
