package notify

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// receiver is a webhook receiver that checks the signature of every post
// and keeps the bodies it accepted; it fails the first failFirst posts.
type receiver struct {
	*httptest.Server
	secret    []byte
	failFirst int32
	posts     atomic.Int32
	mu        sync.Mutex
	bodies    [][]byte
	bad       []string
}

func mustReceiver(tb testing.TB, secret []byte, failFirst int32) *receiver {
	tb.Helper()
	r := &receiver{secret: secret, failFirst: failFirst}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if r.posts.Add(1) <= r.failFirst {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		ts := req.Header.Get(TimestampHeader)
		r.mu.Lock()
		defer r.mu.Unlock()
		if n, err := strconv.ParseInt(ts, 10, 64); err != nil || time.Since(time.Unix(n, 0)) > time.Minute ||
			!Verify(r.secret, ts, body, req.Header.Get(SignatureHeader)) {
			r.bad = append(r.bad, string(body))
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		r.bodies = append(r.bodies, body)
	}))
	tb.Cleanup(r.Close)
	return r
}

func (r *receiver) received() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

func event() Event {
	return Event{Type: TypePending, Approval: "turn_1", Status: "pending", Session: "s1", Summary: "kill <job> & more",
		Signature: []string{"kill_job"}, StateChangingTools: []string{"kill_job"}, RequestedBy: "agent",
		ExpiresAt: time.Unix(1700000000, 0).UTC(), Console: "http://127.0.0.1:8474/ui/#/approvals/turn_1", At: time.Unix(1700000000, 0).UTC()}
}

// TestNotifySigned: an event reaches a receiver that checks its signature,
// after two refused attempts, once; a wrong secret is refused.
func TestNotifySigned(t *testing.T) {
	secret := []byte("s3cret")
	rcv := mustReceiver(t, secret, 2)
	var outcomes sync.Map
	count := func(o string) { v, _ := outcomes.LoadOrStore(o, new(atomic.Int32)); v.(*atomic.Int32).Add(1) }
	n, err := New(Config{URLs: []string{rcv.URL}, Secret: secret, Backoff: time.Millisecond, Count: count})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(event())
	n.Close(context.Background())
	got := rcv.received()
	if len(got) != 1 {
		t.Fatalf("received %d bodies, want 1", len(got))
	}
	var e Event
	if err := json.Unmarshal(got[0], &e); err != nil || e.Approval != "turn_1" || e.Type != TypePending || e.Summary != "kill <job> & more" {
		t.Fatalf("received %s (%v)", got[0], err)
	}
	if v, _ := outcomes.Load("retried"); v == nil || v.(*atomic.Int32).Load() != 2 {
		t.Errorf("retries counted: %v", v)
	}

	other := mustReceiver(t, []byte("another secret"), 0)
	n, _ = New(Config{URLs: []string{other.URL}, Secret: secret, Attempts: 1})
	n.Notify(event())
	n.Close(context.Background())
	if len(other.received()) != 0 || len(other.bad) != 1 {
		t.Fatalf("a post signed with another secret was accepted: %d accepted, %d refused", len(other.received()), len(other.bad))
	}
}

// TestNotifyNeverBlocks: with a receiver that accepts connections and
// never answers, Notify returns at once, and past the queue's bound events
// are dropped and counted.
func TestNotifyNeverBlocks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	var dropped atomic.Int32
	n, err := New(Config{URLs: []string{"http://" + ln.Addr().String() + "/hook"}, Queue: 4, Timeout: 5 * time.Second,
		Count: func(o string) {
			if o == "dropped" {
				dropped.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for range 100 {
			n.Notify(event())
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Notify blocked on a receiver that never answers")
	}
	if d := dropped.Load(); d < 100-4-1 {
		t.Errorf("%d events dropped of 100 with a queue of 4", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	n.Close(ctx)
}

// TestSlackBody: the Slack format is text and blocks, with Slack's markup
// characters escaped and the console link as a button.
func TestSlackBody(t *testing.T) {
	rcv := mustReceiver(t, []byte("k"), 0)
	n, _ := New(Config{URLs: []string{rcv.URL}, Secret: []byte("k"), Format: FormatSlack})
	n.Notify(event())
	n.Close(context.Background())
	got := rcv.received()
	if len(got) != 1 {
		t.Fatalf("received %d", len(got))
	}
	var body struct {
		Text   string           `json:"text"`
		Blocks []map[string]any `json:"blocks"`
	}
	if err := json.Unmarshal(got[0], &body); err != nil || body.Text == "" || len(body.Blocks) != 3 {
		t.Fatalf("the Slack body: %s", got[0])
	}
	if want := "An approval is waiting: kill &lt;job&gt; &amp; more (session s1, by agent)"; body.Text != want {
		t.Errorf("text %q, want %q", body.Text, want)
	}
}

// TestConfigRefused: a URL that is not http(s) and an unknown format are
// refused.
func TestConfigRefused(t *testing.T) {
	for name, cfg := range map[string]Config{
		"ftp URL":        {URLs: []string{"ftp://example.com/x"}},
		"no host":        {URLs: []string{"http:///x"}},
		"unknown format": {URLs: []string{"http://127.0.0.1:1/"}, Format: "xml"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
