package recording

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/procgraph/procgraph/fault"
)

// Verification is the outcome of the last verification of a version
// against its recordings (replay.Verify; docs/api.md): passed when every
// recording passed, failed when one did not, none without a recording.
// A version keeps its last one (procedures.Store.SetVerification); nil until one ran.
type Verification struct {
	Status            string    `json:"status"`
	At                time.Time `json:"at"`
	CatalogueRevision string    `json:"catalogue_revision"`
	Recordings        int       `json:"recordings"`
	Passed            int       `json:"passed"`
}

// The bounds of recordings (docs/design.md "Verification against recorded
// tool responses").
const (
	// MaxRecordingBytes bounds one recording as JSON: a larger one is not
	// kept (never truncated).
	MaxRecordingBytes = 256 << 10
	// MaxRecordingsPage bounds a page of GET …/recordings (its limit);
	// DefaultRecordingsPage is its page without one.
	MaxRecordingsPage     = 100
	DefaultRecordingsPage = 20
	// DefaultRecordingsPerVersion is --recordings-per-version's default.
	DefaultRecordingsPerVersion = 3
	// MaxRecordingsPerVersion bounds --recordings-per-version.
	MaxRecordingsPerVersion = 20
)

// RecordedCall is one tool call of a recording: what the run sent and
// what it got back (a response, or the tool's error message).
type RecordedCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Response  any            `json:"response,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// Recording is one successful run of a version kept for verification: the
// invoke's arguments, its tool calls in order with their answers, and a
// hash of its result. It holds tool output: only the grant scope reads it,
// and no audit record or log line carries it.
type Recording struct {
	// ID names the recording: one per version and argument set (RecordingID).
	ID         string         `json:"id"`
	Procedure  string         `json:"procedure"`
	CodeHash   string         `json:"code_hash"`
	RecordedAt time.Time      `json:"recorded_at"`
	Arguments  map[string]any `json:"arguments"`
	Calls      []RecordedCall `json:"calls"`
	ResultHash string         `json:"result_hash"`
	// ContentHash is a hash of Arguments, Calls and ResultHash: a run that
	// recorded the same again rewrites nothing.
	ContentHash string `json:"-"`
	// Bytes is the recording's size as JSON.
	Bytes int `json:"bytes"`
	// body is EncodeRecordingBody's bytes, made once by NewRecording.
	body []byte
}

// NewRecording builds the recording of a successful run of the version
// codeHash of name called with args, at at: its id, hashes and size. It
// reports fault.CodeInvalid when the recording is larger than
// MaxRecordingBytes (it is then not kept) or does not encode as JSON.
func NewRecording(name, codeHash string, args map[string]any, calls []RecordedCall, result any, at time.Time) (*Recording, error) {
	if args == nil {
		args = map[string]any{}
	}
	if calls == nil {
		calls = []RecordedCall{}
	}
	resultHash, err := ResultHash(result)
	if err != nil {
		return nil, err
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "the run's arguments do not encode as JSON: %v", err)
	}
	r := &Recording{ID: RecordingID(codeHash, argsJSON), Procedure: name, CodeHash: codeHash, RecordedAt: at.UTC(),
		Arguments: args, Calls: calls, ResultHash: resultHash}
	callsJSON, err := json.Marshal(calls)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "the run's tool calls do not encode as JSON: %v", err)
	}
	// recordingBody's encoding, from the parts already encoded.
	body := make([]byte, 0, len(argsJSON)+len(callsJSON)+120)
	body = append(append(append(body, `{"arguments":`...), argsJSON...), `,"calls":`...)
	body = append(append(append(append(body, callsJSON...), `,"result_hash":"`...), r.ResultHash...), `"}`...)
	if len(body) > MaxRecordingBytes {
		return nil, fault.Errorf(fault.CodeInvalid, "the recording is %d bytes, more than %d: not kept", len(body), MaxRecordingBytes).
			WithDetails("reason", "recording_too_large")
	}
	r.ContentHash, r.Bytes, r.body = hashHex(body), len(body), body
	return r, nil
}

// ResultHash is the hash a recording keeps of a run's result (the SHA-256
// of its JSON, hex): a verification compares it with its own run's.
// Returns fault.CodeInvalid when result does not encode as JSON.
func ResultHash(result any) (string, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return "", fault.Errorf(fault.CodeInvalid, "the run's result does not encode as JSON: %v", err)
	}
	return hashHex(b), nil
}

// recordingBody is what a store keeps of a recording besides its names and
// time (EncodeRecordingBody).
type recordingBody struct {
	Arguments  map[string]any `json:"arguments"`
	Calls      []RecordedCall `json:"calls"`
	ResultHash string         `json:"result_hash"`
}

// EncodeRecordingBody is r's arguments, calls and result hash as JSON: what
// a store keeps besides its id, names and time.
func EncodeRecordingBody(r *Recording) ([]byte, error) {
	if r.body != nil {
		return r.body, nil
	}
	return json.Marshal(recordingBody{Arguments: r.Arguments, Calls: r.Calls, ResultHash: r.ResultHash})
}

// DecodeRecordingBody fills r from EncodeRecordingBody's bytes.
func DecodeRecordingBody(b []byte, r *Recording) error {
	var body recordingBody
	if err := json.Unmarshal(b, &body); err != nil {
		return fmt.Errorf("a stored recording does not decode: %v", err)
	}
	r.Arguments, r.Calls, r.ResultHash = body.Arguments, body.Calls, body.ResultHash
	if r.Calls == nil {
		r.Calls = []RecordedCall{}
	}
	r.ContentHash, r.Bytes = hashHex(b), len(b)
	return nil
}

// hexHashShape is a hex sha256 (a recording's result hash).
var hexHashShape = regexp.MustCompile(`^[0-9a-f]{64}$`)

// RecordingFromBody is the recording id of the version codeHash of name,
// recorded at at, whose body is b (EncodeRecordingBody's bytes, as a store
// keeps them and a dump carries them; docs/dumps.md), checked as
// NewRecording makes one, nothing taken on trust: at most
// MaxRecordingBytes of UTF-8 JSON as encoding/json writes it, holding exactly the arguments (an
// object), the calls (each naming its tool) and a result hash (64 hex),
// the id RecordingID of the version and those arguments, a time after
// 1970. EncodeRecordingBody of it is b, its content hash the hash of b.
// Errors are fault.CodeInvalid, saying what is wrong.
func RecordingFromBody(name, codeHash, id string, at time.Time, b []byte) (*Recording, error) {
	bad := func(format string, args ...any) error {
		return fault.Errorf(fault.CodeInvalid, "recording %s: "+format, append([]any{id}, args...)...).WithDetails("field", "recording")
	}
	switch {
	case len(b) > MaxRecordingBytes:
		return nil, bad("its body is %d bytes, more than %d", len(b), MaxRecordingBytes)
	case !utf8.Valid(b):
		return nil, bad("its body is not UTF-8")
	case at.UnixMilli() <= 0:
		return nil, bad("recorded at or before 1970")
	}
	var raw struct {
		Arguments  json.RawMessage `json:"arguments"`
		Calls      []RecordedCall  `json:"calls"`
		ResultHash *string         `json:"result_hash"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, bad("its body is not a recording: %v", err)
	}
	if dec.More() {
		return nil, bad("its body holds more than one JSON value")
	}
	if enc, err := json.Marshal(json.RawMessage(b)); err != nil || !bytes.Equal(enc, b) {
		return nil, bad("its body is not JSON as procgraph writes it (compact, HTML characters escaped)")
	}
	var args map[string]any
	if err := json.Unmarshal(raw.Arguments, &args); err != nil || args == nil {
		return nil, bad("its arguments are not an object")
	}
	if raw.ResultHash == nil || !hexHashShape.MatchString(*raw.ResultHash) {
		return nil, bad("its result hash is not 64 lowercase hex")
	}
	for i, c := range raw.Calls {
		if c.Tool == "" {
			return nil, bad("call %d names no tool", i+1)
		}
	}
	if want := RecordingID(codeHash, raw.Arguments); id != want {
		return nil, bad("its id is not the id of its version and arguments (%s)", want)
	}
	r := &Recording{ID: id, Procedure: name, CodeHash: codeHash, RecordedAt: at.UTC()}
	if err := DecodeRecordingBody(b, r); err != nil {
		return nil, bad("%v", err)
	}
	r.body = b
	return r, nil
}

// RecordingID is the id of the recording of the version codeHash run with
// the arguments argsJSON (their JSON encoding, keys sorted): one per
// version and argument set.
func RecordingID(codeHash string, argsJSON []byte) string {
	h := sha256.New()
	h.Write([]byte(codeHash))
	h.Write([]byte{0})
	h.Write(argsJSON)
	return "rec_" + hex.EncodeToString(h.Sum(nil)[:16])
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// The verification statuses.
const (
	VerificationPassed = "passed"
	VerificationFailed = "failed"
	VerificationNone   = "none"
)

// Check reports why v cannot be kept ("" when it can).
func (v Verification) Check() string {
	switch {
	case v.Status != VerificationPassed && v.Status != VerificationFailed && v.Status != VerificationNone:
		return fmt.Sprintf("status %q is not passed, failed or none", v.Status)
	case v.At.IsZero():
		return "it has no time"
	case v.Recordings < 0 || v.Passed < 0 || v.Passed > v.Recordings:
		return fmt.Sprintf("%d of %d recordings passed", v.Passed, v.Recordings)
	case len(v.CatalogueRevision) > 200:
		return "its catalogue revision is too long"
	}
	return ""
}

// CheckRecordingsPerVersion checks a --recordings-per-version setting.
func CheckRecordingsPerVersion(n int) error {
	if n < 1 || n > MaxRecordingsPerVersion {
		return fmt.Errorf("recordings-per-version must be 1 to %d, not %d", MaxRecordingsPerVersion, n)
	}
	return nil
}
