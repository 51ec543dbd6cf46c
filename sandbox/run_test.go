package sandbox_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

func TestRunBasics(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		args    map[string]any
		allowed []string
		results map[string]any
		want    any
		output  string
		calls   []string
	}{
		{name: "none", src: "return None", want: nil},
		{name: "no return", src: "x = 1", want: nil},
		{name: "bool", src: "return True", want: true},
		{name: "int", src: "return 40 + 2", want: int64(42)},
		{name: "negative int64 edge", src: "return -9223372036854775808", want: int64(-9223372036854775808)},
		{name: "float", src: "return 1.5", want: 1.5},
		{name: "integral float stays float", src: "return 2.0", want: 2.0},
		{name: "string", src: `return "héllo\n\"x\""`, want: "héllo\n\"x\""},
		{name: "list", src: "return [1, 'a', None]", want: []any{int64(1), "a", nil}},
		{name: "tuple becomes list", src: "return (1, 2)", want: []any{int64(1), int64(2)}},
		{name: "dict", src: `return {"b": [True], "a": {"c": 0.25}}`, want: map[string]any{"b": []any{true}, "a": map[string]any{"c": 0.25}}},
		{name: "empty containers", src: "return [[], {}]", want: []any{[]any{}, map[string]any{}}},
		{
			name: "parameters bound", src: "return [task_id, ids, opts['deep'], ratio]",
			args: map[string]any{"task_id": int64(42), "ids": []any{"a", "b"}, "opts": map[string]any{"deep": true}, "ratio": 0.5},
			want: []any{int64(42), []any{"a", "b"}, true, 0.5},
		},
		{name: "print captured", src: "print('hello', 1)\nprint('world')\nreturn 0", want: int64(0), output: "hello 1\nworld\n"},
		{
			name: "tool calls recorded and results converted",
			src: `a = tools.get_task(task_id=task_id)
b = tools.search_jobs(q="x", n=2, f=1.0)
return {"a": a, "kinds": [type(a["n"]), type(a["f"]), type(b)], "b": b}`,
			args:    map[string]any{"task_id": int64(7)},
			allowed: []string{"get_task", "search_jobs"},
			results: map[string]any{"get_task": map[string]any{"n": int64(3), "f": 3.0, "z": nil}, "search_jobs": []any{"j1"}},
			want: map[string]any{
				"a":     map[string]any{"n": int64(3), "f": 3.0, "z": nil},
				"kinds": []any{"int", "float", "list"},
				"b":     []any{"j1"},
			},
			calls: []string{"get_task", "search_jobs"},
		},
		{
			name: "tool sees converted arguments", src: `return tools.echo(a=1, b=[1.0, "x"], c={"k": None})`,
			allowed: []string{"echo"},
			want: map[string]any{"tool": "echo", "args": map[string]any{
				"a": int64(1), "b": []any{1.0, "x"}, "c": map[string]any{"k": nil}}},
			calls: []string{"echo"},
		},
		{
			name: "dict from a tool iterates in sorted key order", src: `return list(tools.m().keys())`,
			allowed: []string{"m"}, results: map[string]any{"m": map[string]any{"b": 1, "c": 2, "a": 3}},
			want: []any{"a", "b", "c"}, calls: []string{"m"},
		},
		{
			name: "go values from a tool are normalised", src: `return tools.s()`,
			allowed: []string{"s"}, results: map[string]any{"s": struct {
				Name string `json:"name"`
				N    int    `json:"n"`
			}{"x", 3}},
			want: map[string]any{"name": "x", "n": int64(3)}, calls: []string{"s"},
		},
	}
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					rec := &recorder{results: tc.results}
					res := run(t, m.runner, tc.src, tc.args, tc.allowed, sandbox.Limits{}, rec)
					if res.Err != nil {
						t.Fatalf("error: %s", errString(res.Err))
					}
					if !reflect.DeepEqual(res.Value, tc.want) {
						t.Errorf("value = %#v, want %#v", res.Value, tc.want)
					}
					if res.Output != tc.output {
						t.Errorf("output = %q, want %q", res.Output, tc.output)
					}
					var got []string
					for _, c := range res.Calls {
						if !c.OK {
							t.Errorf("call %s not ok", c.Tool)
						}
						got = append(got, c.Tool)
					}
					if !reflect.DeepEqual(got, tc.calls) {
						t.Errorf("calls = %v, want %v", got, tc.calls)
					}
					if !reflect.DeepEqual(rec.seen(), tc.calls) {
						t.Errorf("tool caller saw %v, want %v", rec.seen(), tc.calls)
					}
				})
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	boom := errors.New("upstream said no")
	tests := []struct {
		name    string
		src     string
		args    map[string]any
		allowed []string
		errs    map[string]error
		lim     sandbox.Limits
		code    sandbox.ErrorCode
		tool    string
		msg     string // substring of the message
		calls   int    // len(Result.Calls)
	}{
		{name: "syntax error", src: "x = (", code: sandbox.RuntimeError, msg: "proc__test.star:1:"},
		{name: "undefined parameter", src: "return task_id", code: sandbox.RuntimeError, msg: "undefined: task_id"},
		{name: "fail() with position", src: "x = 1\nfail('nope')", code: sandbox.RuntimeError, msg: "proc__test.star:2:5: fail: nope"},
		{name: "load rejected", src: `load("x.star", "y")`, code: sandbox.RuntimeError, msg: "load"},
		{name: "tool error", src: "tools.a()", allowed: []string{"a"}, errs: map[string]error{"a": boom}, code: sandbox.ToolFailed, tool: "a", msg: "upstream said no", calls: 1},
		{name: "nested *Error keeps its code", src: "tools.proc__x()", allowed: []string{"proc__x"},
			errs: map[string]error{"proc__x": &sandbox.Error{Code: sandbox.ToolRefused, Message: "tools.kill_job is not in this run's allow-set", Tool: "kill_job"}},
			code: sandbox.ToolRefused, tool: "kill_job", msg: "kill_job", calls: 1},
		{name: "positional arguments", src: "tools.a(1)", allowed: []string{"a"}, code: sandbox.RuntimeError, msg: "keyword arguments only"},
		{name: "set argument", src: "tools.a(x=set([1]))", allowed: []string{"a"}, code: sandbox.RuntimeError, msg: "argument x: a set is not a JSON value"},
		{name: "non-string dict key", src: "return {1: 2}", code: sandbox.RuntimeError, msg: "dict key 1 is a int, not a string"},
		{name: "set result", src: "return set([1])", code: sandbox.RuntimeError, msg: "a set is not a JSON value"},
		{name: "function result", src: "def f():\n    pass\nreturn f", code: sandbox.RuntimeError, msg: "a function is not a JSON value"},
		{name: "tool result", src: "return tools.a", code: sandbox.RuntimeError, msg: "a tool is not a JSON value"},
		{name: "big int result", src: "return 1 << 70", code: sandbox.RuntimeError, msg: "does not fit in 64 bits"},
		{name: "nan result", src: "return float('nan')", code: sandbox.RuntimeError, msg: "not valid JSON"},
		{name: "cyclic result", src: "l = []\nl.append(l)\nreturn l", code: sandbox.RuntimeError, msg: "cyclic"},
		{name: "result too large", src: "return 'x' * 2000", lim: sandbox.Limits{MaxResult: 1000}, code: sandbox.RuntimeError, msg: "over the limit of 1000"},
		{name: "call limit", src: "for i in range(5):\n    tools.a()", allowed: []string{"a"}, lim: sandbox.Limits{MaxCalls: 3}, code: sandbox.CallLimit, tool: "a", msg: "more than 3 tool calls", calls: 4},
		{name: "infinite loop", src: "while True:\n    pass", lim: sandbox.Limits{MaxSteps: 100000}, code: sandbox.StepLimit, msg: "100000 steps"},
		{name: "infinite loop with short timeout", src: "while True:\n    pass", lim: sandbox.Limits{MaxSteps: 1 << 62, Timeout: 200 * time.Millisecond}, code: sandbox.Timeout, msg: "200ms"},
		{name: "tools as argument name", src: "return 1", args: map[string]any{"tools": 1}, code: sandbox.RuntimeError, msg: `"tools"`},
	}
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					res := run(t, m.runner, tc.src, tc.args, tc.allowed, tc.lim, &recorder{errs: tc.errs})
					if res.Err == nil {
						t.Fatalf("no error; value %#v", res.Value)
					}
					if res.Err.Code != tc.code || res.Err.Tool != tc.tool || !strings.Contains(res.Err.Message, tc.msg) {
						t.Errorf("error = %s, want %s (tool %q) containing %q", errString(res.Err), tc.code, tc.tool, tc.msg)
					}
					if res.Value != nil {
						t.Errorf("value = %#v on failure", res.Value)
					}
					if len(res.Calls) != tc.calls {
						t.Errorf("calls = %+v, want %d", res.Calls, tc.calls)
					}
				})
			}
		})
	}
}

func TestOutputTruncated(t *testing.T) {
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			res := run(t, m.runner, "for i in range(100):\n    print('ééééé')\nreturn 1", nil, nil, sandbox.Limits{MaxOutput: 25}, nil)
			if res.Err != nil {
				t.Fatal(errString(res.Err))
			}
			want := "ééééé\nééééé\né" + sandbox.OutputTruncated // 2×11 bytes + 2 of the 3 left: a rune is never split
			if res.Output != want || res.Value != int64(1) {
				t.Errorf("output %q value %v, want %q", res.Output, res.Value, want)
			}
		})
	}
}

// TestToolPanicRecovered: a ToolCaller that panics fails the run; the
// process (and, in the pool, the worker) lives on.
func TestToolPanicRecovered(t *testing.T) {
	panicky := sandbox.ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (any, error) {
		panic("tool bug")
	})
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			res := run(t, m.runner, "tools.a()", nil, []string{"a"}, sandbox.Limits{}, panicky)
			if res.Err == nil || res.Err.Code != sandbox.RuntimeError || res.Err.Tool != "a" || strings.Contains(res.Err.Message, "tool bug") {
				t.Fatalf("error = %s", errString(res.Err))
			}
			if len(res.Calls) != 1 || res.Calls[0].OK {
				t.Errorf("calls = %+v", res.Calls)
			}
			if res := run(t, m.runner, "return 1", nil, nil, sandbox.Limits{}, nil); res.Err != nil || res.Value != int64(1) {
				t.Errorf("next run: %v %s", res.Value, errString(res.Err))
			}
		})
	}
}
