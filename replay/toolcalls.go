package replay

import "time"

// ToolCallCounter, when the Counter is one too, counts each upstream tool
// call a run made: the server its catalogue entry routes it to (its key;
// "" for the unnamed server), the tool's catalogue name, the call's failure
// class as a run's is named (FailureClass; "" when it answered) and how
// long it took. metrics.Registry is one; serve adds the Gateway's record
// of each server's last failure. It must not block.
type ToolCallCounter interface {
	CountToolCall(server, tool, class string, d time.Duration)
}

// countCall counts one upstream call of tool that started at start and
// ended with class, when the Replayer's Counter counts tool calls.
func (t *toolCaller) countCall(tool, class string, start time.Time) {
	if t.r == nil {
		return
	}
	c, ok := t.r.opts.Counter.(ToolCallCounter)
	if !ok {
		return
	}
	server := ""
	if t.catalogue != nil {
		if tl, ok := t.catalogue.Tool(tool); ok {
			server = tl.Server
		}
	}
	c.CountToolCall(server, tool, class, time.Since(start))
}
