package procedures

import (
	"context"
	"fmt"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/recording"
)

// Recordings returns the page [offset, offset+limit) of the recordings of
// the procedure name (of its version codeHash, when not ""), newest first,
// and how many there are. They hold tool output: the API asks the grant
// scope. Returns fault.CodeNotFound, fault.CodeInvalid for a limit outside
// 1 to MaxRecordingsPage or a negative offset.
func (s *Service) Recordings(ctx context.Context, name, codeHash string, limit, offset int) ([]recording.Recording, int, error) {
	if limit < 1 || limit > recording.MaxRecordingsPage {
		return nil, 0, fault.Errorf(fault.CodeInvalid, "limit must be between 1 and %d", recording.MaxRecordingsPage).WithDetails("field", "limit")
	}
	if offset < 0 {
		return nil, 0, fault.Errorf(fault.CodeInvalid, "offset must not be negative").WithDetails("field", "offset")
	}
	return s.store.Recordings(ctx, name, codeHash, limit, offset)
}

// VersionRecordings returns the recordings of the version codeHash of the
// procedure name, newest first. Returns fault.CodeNotFound.
func (s *Service) VersionRecordings(ctx context.Context, name, codeHash string) ([]recording.Recording, error) {
	rs, _, err := s.store.Recordings(ctx, name, codeHash, 0, 0)
	return rs, err
}

// PurgeRecordings deletes the recordings of the procedure name, audited
// with one decision of kind recordings (reason recordings_purged, the
// operator's reason and the number deleted as its note) in the same
// transaction. Returns the decision and how many were deleted;
// fault.CodeNotFound or fault.CodeInvalid.
func (s *Service) PurgeRecordings(ctx context.Context, name, actor, reason string) (audit.Decision, int, error) {
	if len(reason) > fields.MaxReasonBytes {
		return audit.Decision{}, 0, fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", fields.MaxReasonBytes).WithDetails("field", "reason")
	}
	p, err := s.store.Get(ctx, name)
	if err != nil {
		return audit.Decision{}, 0, err
	}
	d := audit.Decision{Kind: audit.KindRecordings, Procedure: p.Name, CodeHash: p.CodeHash, Outcome: audit.Allowed, Reason: audit.ReasonRecordingsPurged,
		Actor: actor, Note: strings.TrimSpace(reason)}
	n := 0
	rec, err := s.rec.RecordWith(d, func(d audit.Decision) error {
		var err error
		n, err = s.store.DeleteRecordings(ctx, p.Name, &d)
		return err
	})
	if err != nil {
		return audit.Decision{}, 0, err
	}
	return rec, n, nil
}

// ForgetRecordings deletes every recording (--record-responses false at
// start), returning how many; nothing is audited (no operator decided it
// on a procedure: the start's log line says it).
func (s *Service) ForgetRecordings(ctx context.Context) (int, error) {
	n, err := s.store.DeleteRecordings(ctx, "", nil)
	if err != nil {
		return 0, fmt.Errorf("deleting the recordings: %w", err)
	}
	return n, nil
}

// SetVerification keeps v as the last verification of the version
// codeHash of name.
func (s *Service) SetVerification(ctx context.Context, name, codeHash string, v recording.Verification) error {
	if why := v.Check(); why != "" {
		return fault.Errorf(fault.CodeInvalid, "a verification is not kept: %s", why)
	}
	return s.store.SetVerification(ctx, name, codeHash, v)
}
