package recording

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// TestNewRecording: a recording's body is recordingBody's JSON (built from
// its parts, so it must equal encoding/json's), its id depends on the
// version and the arguments only, its size and hashes are its body's; one
// over MaxRecordingBytes is refused (not kept, never truncated), as is a
// result that is not JSON.
func TestNewRecording(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	calls := []RecordedCall{{Tool: "get", Arguments: map[string]any{"task_id": 1, "q": "<&>"}, Response: map[string]any{"x": "é"}},
		{Tool: "fetch", Arguments: map[string]any{}, Error: "down"}}
	args := map[string]any{"task_id": 1, "b": []any{"z", 2}}
	r, err := NewRecording("proc__a", "h1", args, calls, map[string]any{"ok": true}, at)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(recordingBody{Arguments: args, Calls: calls, ResultHash: r.ResultHash})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := EncodeRecordingBody(r); string(got) != string(want) {
		t.Fatalf("body\n%s\nwant encoding/json's\n%s", got, want)
	}
	if r.Bytes != len(want) || r.ContentHash != hashHex(want) {
		t.Errorf("bytes %d, content hash %s; want the body's", r.Bytes, r.ContentHash)
	}
	var back Recording
	if err := DecodeRecordingBody(want, &back); err != nil || back.ContentHash != r.ContentHash || back.ResultHash != r.ResultHash || len(back.Calls) != 2 {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	other, _ := NewRecording("proc__a", "h1", args, nil, "another result", at.Add(time.Hour))
	if other.ID != r.ID || other.ContentHash == r.ContentHash {
		t.Errorf("same version and arguments: ids %s, %s (want equal), content hashes equal: %v", r.ID, other.ID, other.ContentHash == r.ContentHash)
	}
	if v2, _ := NewRecording("proc__a", "h2", args, calls, nil, at); v2.ID == r.ID {
		t.Error("another version has the same recording id")
	}
	big := []RecordedCall{{Tool: "get", Response: strings.Repeat("x", MaxRecordingBytes)}}
	_, err = NewRecording("proc__a", "h1", args, big, nil, at)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeInvalid || fe.Details["reason"] != "recording_too_large" {
		t.Errorf("a recording over the bound: %v, want invalid recording_too_large", err)
	}
	if _, err := NewRecording("proc__a", "h1", args, nil, func() {}, at); fault.ErrorCode(err) != fault.CodeInvalid {
		t.Errorf("a result that is not JSON: %v", err)
	}
}

// TestRecordingFromBody: what NewRecording made reads back from its body
// as it was (same id, hashes, size, and EncodeRecordingBody gives the
// same bytes); a body that is not one NewRecording could make, or under
// another id or time, is refused.
func TestRecordingFromBody(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	calls := []RecordedCall{{Tool: "get", Arguments: map[string]any{"q": "<&>"}, Response: map[string]any{"x": "é"}}, {Tool: "put", Error: "boom"}}
	r, err := NewRecording("proc__get__put", "h1", map[string]any{"task_id": 1.5}, calls, []any{"<ok>"}, at)
	if err != nil {
		t.Fatal(err)
	}
	body, err := EncodeRecordingBody(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := RecordingFromBody(r.Procedure, r.CodeHash, r.ID, r.RecordedAt, body)
	if err != nil {
		t.Fatalf("RecordingFromBody: %v", err)
	}
	if got.ID != r.ID || got.ContentHash != r.ContentHash || got.Bytes != r.Bytes || got.ResultHash != r.ResultHash || len(got.Calls) != 2 {
		t.Errorf("read back %+v, want %+v", got, r)
	}
	if again, _ := EncodeRecordingBody(got); string(again) != string(body) {
		t.Errorf("EncodeRecordingBody of the recording read back:\n%s\nwant\n%s", again, body)
	}
	b := string(body)
	for name, c := range map[string]struct {
		id   string
		at   time.Time
		body string
		want string
	}{
		"another id":       {"rec_00", at, b, "its id"},
		"another version":  {RecordingID("h2", []byte(`{"task_id":1.5}`)), at, b, "its id"},
		"no time":          {r.ID, time.Time{}, b, "1970"},
		"not JSON":         {r.ID, at, b[:len(b)-1], "not a recording"},
		"two values":       {r.ID, at, b + b, "more than one"},
		"extra field":      {r.ID, at, strings.Replace(b, `{"arguments"`, `{"x":1,"arguments"`, 1), "unknown field"},
		"spaced":           {r.ID, at, strings.Replace(b, `,"calls"`, `, "calls"`, 1), "compact"},
		"arguments null":   {RecordingID("h1", []byte("null")), at, strings.Replace(b, `{"task_id":1.5}`, `null`, 1), "not an object"},
		"no result hash":   {r.ID, at, b[:strings.Index(b, `,"result_hash"`)] + "}", "result hash"},
		"a call no tool":   {r.ID, at, strings.Replace(b, `"tool":"put"`, `"tool":""`, 1), "names no tool"},
		"not UTF-8":        {r.ID, at, strings.Replace(b, "é", "\xff", 1), "UTF-8"},
		"over the bound":   {r.ID, at, strings.Replace(b, "boom", strings.Repeat("b", MaxRecordingBytes), 1), "more than"},
		"unknown call key": {r.ID, at, strings.Replace(b, `"tool":"put"`, `"tool":"put","secret":1`, 1), "unknown field"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := RecordingFromBody(r.Procedure, r.CodeHash, c.id, c.at, []byte(c.body))
			if fault.ErrorCode(err) != fault.CodeInvalid || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want invalid saying %q", err, c.want)
			}
		})
	}
}
