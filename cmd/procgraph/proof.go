package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// The proof that a server is the serve that registered it (docs/design.md
// "Secure by default"). Each start of serve draws a random proof key and
// writes it into its 0600 registry entry beside the operator token's path
// (registerCredential). Before the CLI sends a credential it found there,
// every connection it opens to that address carries, first, a request
// with a fresh random challenge (challengeHeader); the server answers
// proofOf(key, challenge) in proofHeader on any answer, before any
// authentication. Only a process that read the entry, or the serve that
// wrote it, can answer: another user's listener on the port of a serve
// that died cannot, nor can it relay the challenge to another start of
// serve (another key). The key never leaves the entry and serve; the
// challenge carries nothing of it or of the token; the answer is an HMAC.
// The proof is bound to the connection the token then travels on, so a
// listener that takes the port between proof and request gets nothing.
const (
	challengeHeader = "Procgraph-Challenge"
	proofHeader     = "Procgraph-Proof"
	// proofKeyBytes and challengeBytes are the sizes of the key and of a
	// challenge, before base64url.
	proofKeyBytes  = 32
	challengeBytes = 32
)

var b64 = base64.RawURLEncoding

// newProofKey is a fresh proof key, base64url.
func newProofKey() (string, error) {
	return randomB64(proofKeyBytes)
}

func randomB64(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return b64.EncodeToString(b), nil
}

// proofOf is the answer to challenge under key: base64url of
// HMAC-SHA256(key, "procgraph registry proof\x00" + challenge).
func proofOf(key []byte, challenge string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("procgraph registry proof\x00"))
	mac.Write([]byte(challenge))
	return b64.EncodeToString(mac.Sum(nil))
}

// answerChallenges answers a well-formed challenge on any request to next
// with its proof under key (base64url).
func answerChallenges(key string, next http.Handler) http.Handler {
	k, err := b64.DecodeString(key)
	if err != nil || len(k) != proofKeyBytes {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := r.Header.Get(challengeHeader); len(c) == b64.EncodedLen(challengeBytes) {
			if _, err := b64.DecodeString(c); err == nil {
				w.Header().Set(proofHeader, proofOf(k, c))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// notProvenError says the server at an address could not prove it is the
// serve that registered it: the registered credential was not sent.
type notProvenError struct {
	addr, entry string
	why         string
}

func (e *notProvenError) Error() string {
	return fmt.Sprintf("the server at %s is not the serve that registered it in %s (%s): neither the operator token nor the request was sent; "+
		"if that serve was stopped, remove the stale entry, or set PROCGRAPH_TOKEN to send a token anyway", e.addr, e.entry, e.why)
}

// provenTransport is an HTTP transport whose every connection has proved
// it holds key (a registered serve's proof key, base64url) before the
// transport sends anything on it; entry names the registry entry for the
// error. It dials directly (no proxy): a registered serve is local.
func provenTransport(key, entry string) (*http.Transport, error) {
	k, err := b64.DecodeString(key)
	if err != nil || len(k) != proofKeyBytes {
		return nil, fmt.Errorf("%s holds no valid proof key", entry)
	}
	d := &net.Dialer{Timeout: 30 * time.Second}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if err := prove(ctx, conn, addr, k); err != nil {
				_ = conn.Close()
				var np *notProvenError
				if errors.As(err, &np) {
					np.entry = entry
				}
				return nil, err
			}
			return conn, nil
		},
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}, nil
}

// prove sends a challenge on conn (GET /healthz, no credential) and
// checks the answer's proof under key, in constant time. conn is left
// after the answer, ready for the next request.
func prove(ctx context.Context, conn net.Conn, addr string, key []byte) error {
	challenge, err := randomB64(challengeBytes)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	defer func() { _ = conn.SetDeadline(time.Time{}) }()
	req, err := http.NewRequest("GET", "http://"+addr+"/healthz", nil)
	if err != nil {
		return err
	}
	req.Header.Set(challengeHeader, challenge)
	if err := req.Write(conn); err != nil {
		return err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return &notProvenError{addr: addr, why: fmt.Sprintf("no answer to the challenge: %v", err)}
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10+1))
	resp.Body.Close()
	got := resp.Header.Get(proofHeader)
	if !hmac.Equal([]byte(got), []byte(proofOf(key, challenge))) {
		return &notProvenError{addr: addr, why: "it cannot prove it holds that serve's key"}
	}
	if err != nil || n > 64<<10 || resp.Close || br.Buffered() > 0 {
		return &notProvenError{addr: addr, why: "its answer to the challenge left the connection unusable"}
	}
	return nil
}
