package procedures

import (
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/recording"
)

// CheckRecording checks the recording of in, the rules every store applies
// (docs/design.md "Verification against recorded tool responses"): kept
// only with a successful run (a replay, or a turn's run that counts in the
// health only), of the procedure used, of at most
// recording.MaxRecordingBytes, of the version the use names, with
// KeepRecordings in bounds.
func (in UseInput) CheckRecording() error {
	r := in.Recording
	if r == nil {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fault.Errorf(fault.CodeInvalid, format, args...).WithDetails("field", "recording")
	}
	switch {
	case in.Run == nil && !in.Replay, in.Run != nil && in.Run.Failure != "":
		return bad("a recording is kept only with a successful run")
	case r.Procedure != in.Name:
		return bad("the recording is of %q, not %q", r.Procedure, in.Name)
	case in.CodeHash == "" || r.CodeHash != in.CodeHash:
		return bad("the recording is of version %q; the use names %q (a recording needs the version named)", r.CodeHash, in.CodeHash)
	case r.ID == "" || r.ContentHash == "" || r.RecordedAt.IsZero():
		return bad("the recording has no id, content hash or time (NewRecording makes them)")
	case r.Bytes > recording.MaxRecordingBytes:
		return bad("the recording is %d bytes, more than %d", r.Bytes, recording.MaxRecordingBytes)
	}
	if err := recording.CheckRecordingsPerVersion(in.KeepRecordings); err != nil {
		return bad("%v", err)
	}
	return nil
}
