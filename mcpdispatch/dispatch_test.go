package mcpdispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// TestReplayThroughMCP replays procedures through the Replayer with the
// MCP dispatcher over both transports: results flow, structured content
// wins over text, text JSON is decoded, plain text stays a string, isError
// is tool_failed with bounded text, and a refused call never reaches the
// upstream.
func TestReplayThroughMCP(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			u := newUpstream(t, tr)
			w := newWorld(t, u.dispatcher(t, Options{}))

			got := w.mustSucceed(`jobs = tools.get_jobs(task_id=task_id)
logs = tools.fetch_logs(task_id=task_id)
return {"jobs": jobs, "logs": logs, "hello": tools.greet(name="ann")}`, map[string]any{"task_id": 42})
			want := map[string]any{
				"jobs":  map[string]any{"jobs": []any{"a", "b"}, "task_id": int64(42), "big": int64(1)<<53 + 1},
				"logs":  map[string]any{"lines": []any{"started", "failed"}, "task_id": int64(42)},
				"hello": "hello ann",
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("result\n got %#v\nwant %#v", got, want)
			}
			if calls := u.rec.Calls(); len(calls) != 3 || fmt.Sprint(calls[0].Args["task_id"]) != "42" {
				t.Fatalf("upstream saw %+v", calls)
			}

			e := w.mustFail(`tools.get_jobs(task_id=1)
return tools.fail_job(task_id=1)`, nil, sandbox.ToolFailed)
			if e.Tool != "fail_job" || !strings.Contains(e.Message, "job log unavailable") || len(e.Message) > 700 {
				t.Fatalf("tool error %q (%d bytes), tool %q", e.Message[:min(80, len(e.Message))], len(e.Message), e.Tool)
			}

			before := len(u.rec.Calls())
			e = w.mustFail(`jobs = tools.fetch_logs(task_id=task_id)
t = tools
return t.kill_job(job_id=task_id)`, map[string]any{"task_id": 7}, sandbox.ToolRefused)
			if e.Tool != "kill_job" {
				t.Fatalf("refused %+v", e)
			}
			if seen := u.rec.Tools()[before:]; !slices.Equal(seen, []string{"fetch_logs"}) || slices.Contains(u.rec.Tools(), "kill_job") {
				t.Fatalf("upstream saw %v after the refused run", seen)
			}
		})
	}
}

// TestCallTimeout bounds each call; the session survives a timeout.
func TestCallTimeout(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			u := newUpstream(t, tr)
			d := u.dispatcher(t, Options{CallTimeout: 300 * time.Millisecond})
			start := time.Now()
			_, err := d.Dispatch(context.Background(), "sleep", map[string]any{"ms": 5000})
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer within 300ms") {
				t.Fatalf("err = %v", err)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Fatalf("timed out after %s", el)
			}
			if v, err := d.Dispatch(context.Background(), "greet", map[string]any{"name": "bo"}); err != nil || v != "hello bo" {
				t.Fatalf("after the timeout: %v, %v", v, err)
			}
			w := newWorld(t, d)
			e := w.mustFail(`tools.pid()
return tools.sleep(ms=5000)`, nil, sandbox.Timeout)
			if !strings.Contains(e.Message, "did not answer") {
				t.Fatalf("replay error %+v", e)
			}
		})
	}
}

// TestStdioRestart kills the stdio server: mid-call (the call fails, the
// next replay restarts the process) and between calls.
func TestStdioRestart(t *testing.T) {
	u := newUpstream(t, "stdio")
	d := u.dispatcher(t, Options{})
	w := newWorld(t, d)
	pid1 := w.mustSucceed(`return [tools.pid(), tools.greet(name="x")]`, nil).([]any)[0]

	e := w.mustFail(`tools.get_jobs(task_id=1)
return tools.crash()`, nil, sandbox.UpstreamUnavailable)
	if !strings.Contains(e.Message, "broke") && !strings.Contains(e.Message, "closed") {
		t.Fatalf("crash error %+v", e)
	}
	pid2 := w.mustSucceed(`return [tools.pid(), tools.fetch_logs(task_id=2)]`, nil).([]any)[0]
	if pid2 == pid1 {
		t.Fatalf("the server was not restarted: pid %v", pid2)
	}

	if err := syscall.Kill(int(pid2.(int64)), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := d.Dispatch(context.Background(), "pid", nil)
		if n, ok := v.(json.Number); err == nil && ok && n.String() != fmt.Sprint(pid2) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new session after SIGKILL: %v, %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHTTPRestart: an upstream that forgot the session (it restarted)
// answers 404; the call is sent once more on a fresh session, and runs once.
func TestHTTPRestart(t *testing.T) {
	u := newUpstream(t, "http")
	d := u.dispatcher(t, Options{})
	if _, err := d.Dispatch(context.Background(), "greet", map[string]any{"name": "a"}); err != nil {
		t.Fatal(err)
	}
	u.restart()
	v, err := d.Dispatch(context.Background(), "greet", map[string]any{"name": "b"})
	if err != nil || v != "hello b" {
		t.Fatalf("after restart: %v, %v", v, err)
	}
	if got := u.rec.Tools(); !slices.Equal(got, []string{"greet", "greet"}) {
		t.Fatalf("upstream saw %v", got)
	}
}

// TestBackoff: an unreachable upstream fails the first connection, then
// fails fast until the backoff expires, then tries again.
func TestBackoff(t *testing.T) {
	if _, err := NewHTTP(context.Background(), "http://127.0.0.1:1/mcp", Options{ConnectTimeout: time.Second}); err == nil {
		t.Fatal("NewHTTP to a closed port succeeded")
	}
	if _, err := NewCommand(context.Background(), []string{"/nonexistent/mcp-server"}, Options{}); err == nil {
		t.Fatal("NewCommand of a missing program succeeded")
	}
	if _, err := NewHTTP(context.Background(), "ftp://x", Options{}); err == nil {
		t.Fatal("NewHTTP accepted ftp://")
	}
	d, err := NewHTTP(context.Background(), "http://127.0.0.1:1/mcp", Options{Lazy: true, MinBackoff: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Dispatch(context.Background(), "greet", nil)
	if err == nil || err.Error() != "tool greet: the upstream MCP server is unreachable" {
		t.Fatalf("first call: %v", err)
	}
	start := time.Now()
	_, err = d.Dispatch(context.Background(), "greet", nil)
	if err == nil || !strings.Contains(err.Error(), "unavailable; next connection attempt in") || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("second call: %v after %s", err, time.Since(start))
	}
	time.Sleep(400 * time.Millisecond)
	_, err = d.Dispatch(context.Background(), "greet", nil)
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("after the backoff: %v", err)
	}
}

// TestClose stops the session; later calls fail with ErrClosed.
func TestClose(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			d := newUpstream(t, tr).dispatcher(t, Options{})
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Dispatch(context.Background(), "greet", nil); !errors.Is(err, ErrClosed) {
				t.Fatalf("after Close: %v", err)
			}
		})
	}
}

// TestHungSessionReplaced: after three timeouts in a row the session is
// replaced; for stdio, the process is restarted. Only the calls that must
// time out get a short CallTimeout; the ones that must answer (pid, the
// second one from a process started anew) get a minute, so a loaded machine
// slows the test down but cannot fail it. (Options are read only by the
// calling goroutine, so changing them between calls is race-free.)
func TestHungSessionReplaced(t *testing.T) {
	u := newUpstream(t, "stdio")
	d := u.dispatcher(t, Options{CallTimeout: time.Minute})
	before, err := d.Dispatch(context.Background(), "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	d.setCallTimeout(200 * time.Millisecond)
	for range maxTimeouts {
		if _, err := d.Dispatch(context.Background(), "sleep", map[string]any{"ms": 5000}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("sleep: %v", err)
		}
	}
	d.setCallTimeout(time.Minute)
	after, err := d.Dispatch(context.Background(), "pid", nil)
	if err != nil || after == before {
		t.Fatalf("pid before %v, after %v (%v)", before, after, err)
	}
}
