package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/notify"
)

// hookReceiver is a webhook receiver that accepts only posts signed with
// its secret and keeps their events.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []notify.Event
	raw    []string
	bad    int
}

func mustHookReceiver(t *testing.T, secret []byte) *hookReceiver {
	t.Helper()
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if !notify.Verify(secret, r.Header.Get(notify.TimestampHeader), body, r.Header.Get(notify.SignatureHeader)) {
			h.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var e notify.Event
		if err := json.Unmarshal(body, &e); err != nil {
			h.bad++
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		h.events = append(h.events, e)
		h.raw = append(h.raw, string(body))
	}))
	t.Cleanup(h.Close)
	return h
}

// waitFor waits until the receiver holds an event of type typ for approval
// id, and returns it.
func (h *hookReceiver) waitFor(t *testing.T, id, typ string) notify.Event {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		for _, e := range h.events {
			if e.Approval == id && e.Type == typ {
				h.mu.Unlock()
				return e
			}
		}
		h.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s event for %s; received %+v", typ, id, h.events)
	return notify.Event{}
}

// TestNotifyApprovals: with --notify-webhook and a secret, a receiver that
// checks the signature is told of a pending approval, of its rejection,
// and of another's expiry, with the console link; no event carries the
// block's code, an argument value or a token.
func TestNotifyApprovals(t *testing.T) {
	t.Parallel()
	secret := []byte("a-webhook-secret-of-32-bytes....")
	rcv := mustHookReceiver(t, secret)
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	a := mustTurnServer(t, mustUpstream(t), "--notify-webhook", rcv.URL, "--notify-secret-file", secretFile,
		"--approval-timeout", "2s", "--public-url", "https://procgraph.example")
	body := killTurn("notify-session", 424242)
	body["summary"] = "kill the stuck job"
	rejected := a.mustPending(t, body)
	e := rcv.waitFor(t, rejected, notify.TypePending)
	if e.Session != "notify-session" || e.Summary != "kill the stuck job" || e.Status != "pending" ||
		strings.Join(e.StateChangingTools, ",") != "kill_job" || e.Console != "https://procgraph.example/ui/#/approvals/"+rejected {
		t.Errorf("the pending event: %+v", e)
	}
	mustStatus(t, a.resolve(t, a.op, rejected, map[string]any{"choice": "reject", "reason": "not now"}), 200)
	if e := rcv.waitFor(t, rejected, notify.TypeResolved); e.Status != "rejected" {
		t.Errorf("the resolution: %+v", e)
	}
	expired := a.mustPending(t, killTurn("notify-session", 424242))
	rcv.waitFor(t, expired, notify.TypePending)
	time.Sleep(2100 * time.Millisecond)
	a.as(t, a.agent, "GET", "/v1/turns/"+expired, nil) // reading it settles its deadline
	rcv.waitFor(t, expired, notify.TypeExpired)

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.bad != 0 {
		t.Errorf("%d posts failed the signature check", rcv.bad)
	}
	for _, raw := range rcv.raw {
		for _, secret := range []string{"424242", "panda_id=", "return tools", a.agent, a.op} {
			if strings.Contains(raw, secret) {
				t.Errorf("an event carries %q: %s", secret, raw)
			}
		}
	}
}

// TestNotifyConfigRefused: a webhook that is not an http(s) URL, a secret
// without a webhook, and a short key refuse the start.
func TestNotifyConfigRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"not http":             {[]string{"--notify-webhook", "ftp://example.com/hook"}, "--notify-webhook"},
		"secret without hook":  {[]string{"--notify-secret-file", short}, "without --notify-webhook"},
		"a key under 16 bytes": {[]string{"--notify-webhook", "http://127.0.0.1:1/hook", "--notify-secret-file", short}, "at least 16"},
		"unknown format":       {[]string{"--notify-webhook", "http://127.0.0.1:1/hook", "--notify-format", "xml"}, "--notify-format"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "p.db"), "--auth", "off"}, c.args...)
			if _, err := startMain(t, args); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("start: %v, want an error naming %s", err, c.want)
			}
		})
	}
}
