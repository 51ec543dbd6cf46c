// Package usage holds the keys a request is counted and gated under, a
// leaf below procedures: the usage key (UsageKey: its session id, else its
// idempotency key, else a fresh one), the session of an MCP call that
// names none (MCPSession), and the rules on a session id and an
// Idempotency-Key wherever one enters (CheckSessionID,
// CheckIdempotencyKey).
package usage
