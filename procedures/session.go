package procedures

import (
	"github.com/procgraph/procgraph/internal/fields"
)

// CheckSessionID is the rule on a session id, wherever one enters (a
// capture, an invoke, a turn, MCP, the session-policy routes; capture and
// invoke take "" for none): fields.SessionID, 1 to fields.MaxKeyBytes bytes of
// UTF-8 without control characters (the schemas publish the same rule). A session id is a key the stores build others from
// (a NUL would let one session's id be a prefix of another's keys) and a
// path segment; nothing else is asked of it ("/" and ".." are as good as
// any other character). Returns fault.CodeInvalid (field session_id).
func CheckSessionID(id string) error {
	return sessionID.CheckString(id)
}

// sessionID is the session id where one is required.
var sessionID = fields.SessionID.NonEmpty()

// CheckIdempotencyKey is the rule on an Idempotency-Key header (capture and
// invoke; "" for none): fields.IdempotencyKey, at most fields.MaxKeyBytes bytes of
// UTF-8 without control characters, as a session id. It is the usage key of
// a request without a session id, a key the stores build others from.
// Returns fault.CodeInvalid (field Idempotency-Key).
func CheckIdempotencyKey(key string) error {
	return fields.IdempotencyKey.CheckString(key)
}
