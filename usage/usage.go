package usage

import (
	"crypto/rand"
	"encoding/hex"

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

// UsageKey returns the key a request counts under: its session id, else its
// idempotency key, else a fresh one.
func UsageKey(sessionID, idempotencyKey string) string {
	switch {
	case sessionID != "":
		return "s:" + sessionID
	case idempotencyKey != "":
		return "i:" + idempotencyKey
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic("usage: crypto/rand failed: " + err.Error())
	}
	return "r:" + hex.EncodeToString(r[:])
}

// MCPSession is the session an MCP call that names none counts and is gated
// under — a proc__ call's usage key, a run_code turn's session: "mcp:" and
// its MCP session's id (sessionID, "" on a stateless request) or, without
// one, "mcp:" and its token holder. Either is a session_id a client could
// name itself, so a stateless caller gains nothing by it (one key per
// holder; a session policy only for the holder who set it).
func MCPSession(sessionID, holder string) string {
	if sessionID != "" {
		return "mcp:" + sessionID
	}
	return "mcp:" + holder
}
