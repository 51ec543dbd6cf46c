package sandbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// TestStopKeepsTheLine: a run its ToolCaller stops (sandbox.Stopped) ends
// with the stop, naming the line of the call it stopped at — in a
// function too — and nothing after it runs; any other failure names no
// line.
func TestStopKeepsTheLine(t *testing.T) {
	stop := &sandbox.Error{Code: sandbox.Stopped, Message: "paused for review"}
	tests := []struct {
		name string
		src  string
		err  error
		code sandbox.ErrorCode
		line int
	}{
		{"at the top", "x = tools.read()\ntools.write(id=x)\ntools.read()", stop, sandbox.Stopped, 2},
		{"in a function", "def kill(i):\n    return tools.write(id=i)\n\nx = tools.read()\nkill(x)", stop, sandbox.Stopped, 2},
		{"a failure is not a stop", "x = tools.read()\ntools.write(id=x)", errors.New("upstream said no"), sandbox.ToolFailed, 0},
	}
	for _, m := range modes(t) {
		for _, tc := range tests {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				rec := &recorder{results: map[string]any{"read": 7}, errs: map[string]error{"write": tc.err}}
				res := m.runner.Run(context.Background(), sandbox.Request{Filename: "proc__test.star", Source: tc.src,
					Allowed: []string{"read", "write"}}, rec)
				if res.Err == nil || res.Err.Code != tc.code || res.Err.Tool != "write" || res.Err.Line != tc.line {
					t.Fatalf("Err = %+v, want %s of tools.write on line %d", res.Err, tc.code, tc.line)
				}
				if got := rec.seen(); len(got) != 2 || got[0] != "read" || got[1] != "write" {
					t.Fatalf("the tools saw %v", got)
				}
			})
		}
	}
}
