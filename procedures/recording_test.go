package procedures

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
