package sandbox_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// fakeWorkerEnv, set in a pool's PoolConfig.Env, makes the test binary a
// worker that speaks the protocol and then breaks it the way its value
// says (runFakeWorker). The parent under test is the real one: these stand
// for a worker that dies or is killed half-way through a frame.
const fakeWorkerEnv = "PROCGRAPH_SANDBOX_TEST_FAKE"

// runFakeWorker says hello, reads the run, and then misbehaves:
//
//	truncated-call:N: starts a tool call frame announcing N bytes of
//	arguments, writes its header and a few bytes, and exits.
//	json-call:N: asks for a tool call with N bytes of arguments in a JSON
//	frame (calls travel as binary frames, whose header the parent checks
//	before reading them), then waits for its end.
func runFakeWorker(mode string) int {
	mode, arg, _ := strings.Cut(mode, ":")
	writeFrame := func(payload []byte, total int) {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(total))
		_, _ = os.Stdout.Write(append(hdr[:], payload...))
	}
	hello := []byte(fmt.Sprintf(`J{"hello":{"pid":%d,"mapped":0}}`, os.Getpid()))
	writeFrame(hello, len(hello))
	var hdr [4]byte
	if _, err := io.ReadFull(os.Stdin, hdr[:]); err != nil {
		return 1
	}
	if _, err := io.CopyN(io.Discard, os.Stdin, int64(binary.BigEndian.Uint32(hdr[:]))); err != nil {
		return 1
	}
	switch mode {
	case "truncated-call":
		const tool = "echo"
		call := []byte{'C'}
		call = binary.BigEndian.AppendUint64(call, 1) // the first run's id
		call = binary.BigEndian.AppendUint64(call, 1)
		call = binary.BigEndian.AppendUint16(call, uint16(len(tool)))
		call = append(call, tool...)
		call = append(call, `{"s":"xxxxxxxx`...)
		n, err := strconv.Atoi(arg)
		if err != nil {
			return 2
		}
		writeFrame(call, 19+len(tool)+n) // n bytes of arguments announced, a few sent
		return 0
	case "json-call":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return 2
		}
		call := []byte(`J{"call":{"run":1,"id":1,"tool":"echo","args":{"s":"` + strings.Repeat("x", n) + `"}}}`)
		writeFrame(call, len(call))
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	return 2
}

// TestWorkerDiesInsideARefusedCall: a worker that dies while the parent
// skips a tool call it refused unread (over the per-call bound, or not
// fitting the in-flight budget; the frame cut short) fails its run with
// runtime_error — it neither takes the server down (a nil release function
// was called on that path) nor reaches the tool — leaves nothing reserved
// in the budget, and is counted as crashed.
func TestWorkerDiesInsideARefusedCall(t *testing.T) {
	tests := []struct {
		name     string
		announce int
		budget   int64
		refused  int64 // refusals the budget counts
	}{
		{"over the per-call bound", 32 << 20, 64 << 20, 0},
		{"over the budget", 512 << 10, 1 << 20, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			budget := sandbox.NewBudget(tc.budget)
			p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1, MaxCallBytes: 1 << 20, Budget: budget,
				Env: []string{fmt.Sprintf("%s=truncated-call:%d", fakeWorkerEnv, tc.announce)}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			rec := &recorder{}
			var res sandbox.Result
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("Pool.Run panicked: %v", v)
					}
				}()
				res = run(t, p, "return tools.echo(s='x')", nil, []string{"echo"}, sandbox.Limits{}, rec)
			}()
			if res.Err == nil || res.Err.Code != sandbox.RuntimeError || !strings.Contains(res.Err.Message, "died") {
				t.Fatalf("result error %s, want runtime_error: the worker died", errString(res.Err))
			}
			if len(rec.seen()) != 0 {
				t.Fatalf("the tool saw %v", rec.seen())
			}
			if s := p.Stats(); s.Crashed != 1 || s.Busy != 0 {
				t.Fatalf("stats %+v, want the worker counted as crashed once and none busy", s)
			}
			if b := budget.Stats(); b.InUse != 0 || b.Refused != tc.refused {
				t.Fatalf("budget %+v, want nothing in use and %d refusals", b, tc.refused)
			}
		})
	}
}

// TestCallInAJSONFrameIsAViolation: a tool call arrives only as a binary
// frame, whose header the parent checks against the per-call bound and the
// budget before reading it. A call inside a JSON frame would skip both:
// it is a protocol violation (the worker is killed), never dispatched.
func TestCallInAJSONFrameIsAViolation(t *testing.T) {
	budget := sandbox.NewBudget(64 << 20)
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1, MaxCallBytes: 1 << 20, Budget: budget,
		Env: []string{fmt.Sprintf("%s=json-call:%d", fakeWorkerEnv, 2<<20)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := &recorder{}
	res := run(t, p, "return tools.echo(s='x')", nil, []string{"echo"}, sandbox.Limits{Timeout: 2 * time.Second}, rec)
	if len(rec.seen()) != 0 {
		t.Fatalf("a 2 MiB call in a JSON frame reached the tool (per-call bound 1 MiB): %v", rec.seen())
	}
	if res.Err == nil || res.Err.Code != sandbox.RuntimeError || !strings.Contains(res.Err.Message, "protocol violation") {
		t.Fatalf("result error %s, want runtime_error: sandbox protocol violation", errString(res.Err))
	}
	if s := p.Stats(); s.Killed != 1 {
		t.Fatalf("stats %+v, want the worker killed", s)
	}
}
