package mcpserve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/reuse"
)

// The requestState of an in-client review (ModernRevision): the client
// echoes it, with its answer, on the retried run_code call, and nothing
// but a state this handler issued, for this turn, caller and call, once,
// before the turn's deadline, resolves the turn.
//
// A state is base64url(claim JSON) "." base64url(HMAC-SHA256(key,
// label || claim JSON)); the key is random per Handler and process, so a
// state is refused by the other endpoint, another instance and after a
// restart (the turn stays pending: await_approval or the console resolve
// it). Redeeming marks the claim's nonce used until its deadline: a
// replay is refused even while the turn is still pending (a "cancel").

// maxStateBytes bounds a requestState read back (an issued one is ~500
// bytes, ~1 KiB with a suggestion).
const maxStateBytes = 4096

// stateLabel separates these MACs from any other use of the key.
const stateLabel = "procgraph mcp review state v1\x00"

// Reasons (details.reason) of a refused requestState.
const (
	ReasonRequestState     = "request_state"      // not issued here, altered, expired or for another turn, caller or call
	ReasonRequestStateUsed = "request_state_used" // issued here and redeemed already
)

// reviewClaim is what a state binds: the turn, who was asked (the token
// holder), the endpoint's phase, the turn's code hash, the call's
// arguments (argsDigest), a nonce and the turn's deadline; and what the
// answer carries.
type reviewClaim struct {
	Turn     string `json:"turn"`
	Holder   string `json:"holder"`
	Phase    string `json:"phase"`
	CodeHash string `json:"code_hash"`
	Args     string `json:"args"`
	Nonce    string `json:"nonce"`
	Expires  int64  `json:"expires"` // Unix milliseconds
	// Suggestion is the turn's reuse suggestion (Gate.Submit's), which
	// the retry's answer carries, as the legacy review's does.
	Suggestion *reuse.Suggestion `json:"suggestion,omitempty"`
	// Call is the call a turn reviewed at the call was paused at when the
	// state was issued (nil for a block's review): the answer is given at
	// that call, and refused once the turn paused at another.
	Call *gate.CallRef `json:"call,omitempty"`
}

// reviewStates issues and redeems states; safe for concurrent use.
type reviewStates struct {
	key [32]byte
	now func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // nonce -> the claim's expiry
}

func newReviewStates() *reviewStates {
	s := &reviewStates{now: time.Now, used: map[string]time.Time{}}
	if _, err := rand.Read(s.key[:]); err != nil {
		panic("mcpserve: crypto/rand failed: " + err.Error())
	}
	return s
}

func (s *reviewStates) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(stateLabel))
	m.Write(payload)
	return m.Sum(nil)
}

// pruneLocked forgets the used nonces whose deadline has passed (their
// states are refused as expired anyway). s.mu is held.
func (s *reviewStates) pruneLocked(now time.Time) {
	for n, exp := range s.used {
		if !now.Before(exp) {
			delete(s.used, n)
		}
	}
}

// issue returns the state of c (a fresh nonce is set).
func (s *reviewStates) issue(c reviewClaim) (string, error) {
	s.mu.Lock()
	s.pruneLocked(s.now())
	s.mu.Unlock()
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return "", err
	}
	c.Nonce = hex.EncodeToString(n[:])
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(payload)), nil
}

// redeem checks state against the caller (holder), the endpoint's phase
// and the retried call's arguments (argsDigest), and uses it up: the claim,
// or a fault (invalid_request, reason request_state; conflict, reason
// request_state_used).
func (s *reviewStates) redeem(state, holder, phase, args string) (reviewClaim, error) {
	bad := func(why string) error {
		return fault.Errorf(fault.CodeInvalid, "requestState refused: %s; call run_code again without it to be asked anew", why).
			WithDetails("reason", ReasonRequestState).WithDetails("field", "requestState")
	}
	if len(state) > maxStateBytes {
		return reviewClaim{}, bad("it is longer than any this server issues")
	}
	p64, m64, ok := strings.Cut(state, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p64)
	mac, err2 := enc.DecodeString(m64)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(payload)) {
		return reviewClaim{}, bad("it is not one this endpoint issued")
	}
	var c reviewClaim
	if err := json.Unmarshal(payload, &c); err != nil || c.Nonce == "" || c.Turn == "" {
		return reviewClaim{}, bad("it is not one this endpoint issued")
	}
	now := s.now()
	expires := time.UnixMilli(c.Expires)
	switch {
	case !now.Before(expires):
		return reviewClaim{}, bad("the review's deadline has passed")
	case c.Holder != holder:
		return reviewClaim{}, bad("it was issued to another caller")
	case c.Phase != phase:
		return reviewClaim{}, bad("it was issued by another endpoint")
	case c.Args != args:
		return reviewClaim{}, bad("the call's arguments are not those it was issued for")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	if _, done := s.used[c.Nonce]; done {
		return reviewClaim{}, fault.Errorf(fault.CodeConflict, "requestState refused: it was used already (a review is answered once); call run_code again without it to be asked anew").
			WithDetails("reason", ReasonRequestStateUsed).WithDetails("field", "requestState")
	}
	s.used[c.Nonce] = expires
	return c, nil
}

// argsDigest is the digest of a call's arguments, which a state binds:
// jsonvalue.Digest, the one digest of a value an approval binds to.
func argsDigest(args map[string]any) (string, error) {
	return jsonvalue.Digest(args)
}
