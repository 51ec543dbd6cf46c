package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/procgraph/procgraph/internal/jsonvalue"
)

// frame returns the payload (without the length header) frameWriter writes
// for m.
func frame(tb testing.TB, m *message) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := (&frameWriter{w: &buf}).write(m); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()[4:]
}

// FuzzDecodeFrame: a frame comes from a worker, which runs untrusted code:
// decoding any bytes never panics, a JSON frame never decodes to a call or
// a call result (those are binary frames only, whose header the parent
// checks before reading), and a call frame that decodes writes and decodes
// back to the same call.
func FuzzDecodeFrame(f *testing.F) {
	for _, m := range []*message{
		{Call: &callMsg{Run: 1, ID: 2, Tool: "get_jobs", Args: json.RawMessage(`{"task_id":1}`)}},
		{CallResult: &resultMsg{Run: 1, ID: 2, Value: json.RawMessage(`[1,2.5,"x"]`)}},
		{CallResult: &resultMsg{Run: 1, ID: 2, Error: &Error{Code: ToolRefused, Message: "no", Tool: "kill_job"}}},
		{Done: &doneMsg{Run: 1, Value: json.RawMessage(`{"a":null}`), Output: "hi"}},
		{Hello: &helloMsg{PID: 7, Mapped: 1 << 20}},
		{Cancel: &cancelMsg{Run: 3}},
	} {
		f.Add(frame(f, m))
	}
	f.Add([]byte{})
	f.Add([]byte{kindCall, 0, 0})
	f.Add([]byte{kindResult})
	f.Add([]byte(`J{"call":{"run":1,"id":1,"tool":"echo","args":{"s":"x"}}}`))
	f.Add([]byte(`J{"call_result":{"run":1,"id":1,"value":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeFrame(data)
		if err == nil && data[0] == kindJSON && (m.Call != nil || m.CallResult != nil) {
			t.Fatalf("a JSON frame decoded to a call or a result: %q", data)
		}
		if err != nil || m == nil || m.Call == nil {
			return
		}
		again, err := decodeFrame(frame(t, m))
		if err != nil {
			if len(m.Call.Tool) > 0xffff {
				return // refused by the writer, never sent
			}
			t.Fatalf("a decoded call does not decode again: %v", err)
		}
		if !reflect.DeepEqual(again.Call, m.Call) {
			t.Fatalf("call changed: %+v -> %+v", m.Call, again.Call)
		}
	})
}

// FuzzJSON: values and tool results cross the worker boundary as JSON:
// jsonvalue.Decode accepts only what encoding/json accepts, never panics, and
// what it decodes encodes (appendJSON) and decodes back to the same value.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,-3e2,"x",true,null]}`, `9223372036854775807`, `9223372036854775808`,
		`1.0`, `"\u00e9\ud83d\ude00"`, `[[[[]]]]`, `{"":{}}`, `1 2`, `"\ud800"`, `-0`, `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonvalue.Decode(data)
		if err != nil {
			return
		}
		if !json.Valid(bytes.TrimSpace(data)) {
			t.Fatalf("jsonvalue.Decode accepted invalid JSON %q", data)
		}
		out, err := appendJSON(nil, v)
		if err != nil {
			return // e.g. a number too large to be kept exactly
		}
		back, err := jsonvalue.Decode(out)
		if err != nil {
			t.Fatalf("appendJSON wrote %q, which does not decode: %v", out, err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Fatalf("round trip changed %#v into %#v (via %q)", v, back, out)
		}
	})
}

// FuzzPeekCall: the server looks at a frame's header before reading it
// (to skip arguments it will not hold). For any bytes, peekCall agrees
// with reading the whole frame: a call header it reports is the call read(), and
// the length it reports is what discard skips.
func FuzzPeekCall(f *testing.F) {
	for _, m := range []*message{
		{Call: &callMsg{Run: 1, ID: 2, Tool: "get_jobs", Args: json.RawMessage(`{"task_id":1}`)}},
		{Call: &callMsg{Run: 9, ID: 1, Tool: "", Args: json.RawMessage(`{}`)}},
		{Done: &doneMsg{Run: 1, Value: json.RawMessage(`1`)}},
		{CallResult: &resultMsg{Run: 1, ID: 2, Value: json.RawMessage(`[]`)}},
	} {
		var buf bytes.Buffer
		if err := (&frameWriter{w: &buf}).write(m); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte{0, 0, 0, 19, kindCall})
	f.Add([]byte{0, 0, 0, 30, kindCall, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		n, head, err := newFrameReader(bytes.NewReader(data)).peekCall()
		if err != nil {
			return
		}
		m, rerr := newFrameReader(bytes.NewReader(data)).read()
		if errors.Is(rerr, io.ErrUnexpectedEOF) || errors.Is(rerr, io.EOF) {
			return // the frame is cut short: the worker is lost either way
		}
		if head != nil {
			if rerr != nil || m.Call == nil || m.Call.Run != head.Run || m.Call.ID != head.ID || m.Call.Tool != head.Tool {
				t.Fatalf("peeked %+v, read %+v (%v)", head, m, rerr)
			}
		}
		fr := newFrameReader(bytes.NewReader(data))
		if err := fr.discard(n); err != nil {
			return // a short frame: read fails the same way
		}
		if rest, _ := fr.r.Peek(len(data)); len(rest) != len(data)-4-n {
			t.Fatalf("discard(%d) left %d of %d bytes", n, len(rest), len(data))
		}
	})
}
