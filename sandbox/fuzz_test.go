package sandbox

import (
	"bytes"
	"encoding/json"
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
// decoding any bytes never panics, and a call frame that decodes writes and
// decodes back to the same call.
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
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeFrame(data)
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
