package procedures

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckSessionID is the rule on a session id, wherever one enters (a turn,
// the session-policy routes): 1 to MaxKeyBytes bytes of UTF-8 without
// control characters. A session id is a key the stores build others from
// (a NUL would let one session's id be a prefix of another's keys) and a
// path segment; nothing else is asked of it ("/" and ".." are as good as
// any other character). Returns CodeInvalid (field session_id).
func CheckSessionID(id string) error {
	switch {
	case id == "":
		return Errorf(CodeInvalid, "session_id is required").WithDetails("field", "session_id")
	case len(id) > MaxKeyBytes || !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0:
		return Errorf(CodeInvalid, "session_id must be UTF-8 of at most %d bytes without control characters", MaxKeyBytes).
			WithDetails("field", "session_id")
	}
	return nil
}

// SessionPolicies returns the session's policies (GET
// /v1/sessions/{id}/policies). Returns CodeInvalid for an id
// CheckSessionID refuses, and the store's codes.
func (s *Service) SessionPolicies(ctx context.Context, sessionID string) ([]SessionPolicy, error) {
	if err := CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	return s.store.Policies(ctx, sessionID)
}
