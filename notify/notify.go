// Package notify tells people about approvals by webhook: a new pending
// approval, its resolution and its expiry are posted to each configured
// URL as JSON (or a Slack-compatible body), signed with HMAC-SHA256 when a
// secret is set, from a bounded queue with retries and backoff. Posting
// never blocks what produced the event: a full queue drops it and counts
// the drop. An event names the approval, never code, argument values or
// tokens (docs/design.md "Notifications").
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// The event types.
const (
	TypePending  = "approval.pending"  // a turn began to wait for an operator
	TypeResolved = "approval.resolved" // an operator approved or rejected it, or its requester cancelled it
	TypeExpired  = "approval.expired"  // its deadline passed with no answer
)

// Event is one notification: what an operator needs to find the approval
// and decide whether to look now. It carries no code, argument value or
// token.
type Event struct {
	Type               string    `json:"type"`
	Approval           string    `json:"approval"` // the turn's id
	Status             string    `json:"status"`   // the turn's status after the change
	Session            string    `json:"session"`
	Summary            string    `json:"summary"` // what the agent says the block does
	Signature          []string  `json:"signature"`
	StateChangingTools []string  `json:"state_changing_tools"`
	RequestedBy        string    `json:"requested_by"`
	ExpiresAt          time.Time `json:"expires_at"`
	Console            string    `json:"console,omitempty"` // the console's page of the approval
	At                 time.Time `json:"at"`
}

// The body formats.
const (
	FormatJSON  = "json"  // the Event as JSON
	FormatSlack = "slack" // {"text", "blocks"} as Slack's incoming webhooks take it
)

// SignatureHeader carries "sha256=" and the hex HMAC-SHA256, keyed by the
// secret, of TimestampHeader's value, ".", and the body: a receiver checks
// both and refuses an old timestamp, so a body cannot be replayed later.
const (
	SignatureHeader = "Procgraph-Signature"
	TimestampHeader = "Procgraph-Timestamp"
	EventHeader     = "Procgraph-Event"
)

// Sign returns SignatureHeader's value for body sent at timestamp (Unix
// seconds, as TimestampHeader says it).
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is Sign's for body at timestamp, in
// constant time.
func Verify(secret []byte, timestamp string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, timestamp, body)), []byte(signature))
}

// Config configures a Notifier. Zero fields take defaults.
type Config struct {
	URLs   []string // where events are posted (http or https)
	Secret []byte   // the HMAC key; none: not signed
	Format string   // FormatJSON (default) or FormatSlack
	// Queue bounds the events waiting to be posted (default 256); past it
	// an event is dropped and counted.
	Queue int
	// Attempts per event and URL (default 5), Backoff the wait after the
	// first failure (default 1 s), doubled after each, Timeout each post's
	// (default 10 s).
	Attempts int
	Backoff  time.Duration
	Timeout  time.Duration
	Client   *http.Client
	// Count, if set, is told of each outcome: "sent", "failed" (every
	// attempt failed), "retried" (one attempt failed), "dropped" (the
	// queue was full).
	Count func(outcome string)
	Log   zerolog.Logger
}

// CheckURL checks a webhook URL: http or https with a host.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", raw)
	}
	return nil
}

// Notifier posts events from its queue until Close.
type Notifier struct {
	cfg   Config
	queue chan Event
	stop  chan struct{}
	done  sync.WaitGroup
	once  sync.Once
}

// New starts a notifier for cfg; its URLs must pass CheckURL.
func New(cfg Config) (*Notifier, error) {
	for _, u := range cfg.URLs {
		if err := CheckURL(u); err != nil {
			return nil, err
		}
	}
	switch cfg.Format {
	case "":
		cfg.Format = FormatJSON
	case FormatJSON, FormatSlack:
	default:
		return nil, fmt.Errorf("format %q is not %s or %s", cfg.Format, FormatJSON, FormatSlack)
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 256
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout}
	}
	if cfg.Count == nil {
		cfg.Count = func(string) {}
	}
	n := &Notifier{cfg: cfg, queue: make(chan Event, cfg.Queue), stop: make(chan struct{})}
	n.done.Add(1)
	go n.run()
	return n, nil
}

// Notify queues e without waiting: a full queue drops it (counted).
func (n *Notifier) Notify(e Event) {
	select {
	case <-n.stop:
		return
	default:
	}
	select {
	case n.queue <- e:
	default:
		n.cfg.Count("dropped")
		n.cfg.Log.Warn().Str("approval", e.Approval).Str("type", e.Type).Msg("notify: the queue is full; the event is dropped")
	}
}

// Close stops taking events and waits, up to ctx's end, for those queued
// to be posted (a retry's wait ends at once).
func (n *Notifier) Close(ctx context.Context) {
	n.once.Do(func() { close(n.stop) })
	done := make(chan struct{})
	go func() { n.done.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (n *Notifier) run() {
	defer n.done.Done()
	for {
		select {
		case e := <-n.queue:
			n.post(e)
		case <-n.stop:
			for {
				select {
				case e := <-n.queue:
					n.post(e)
				default:
					return
				}
			}
		}
	}
}

// post sends e to every URL, each with its retries.
func (n *Notifier) post(e Event) {
	body, err := n.body(e)
	if err != nil {
		n.cfg.Count("failed")
		return
	}
	for _, u := range n.cfg.URLs {
		n.postOne(u, e, body)
	}
}

func (n *Notifier) postOne(target string, e Event, body []byte) {
	wait := n.cfg.Backoff
	for attempt := 1; ; attempt++ {
		err := n.send(target, e, body)
		if err == nil {
			n.cfg.Count("sent")
			return
		}
		if attempt == n.cfg.Attempts {
			n.cfg.Count("failed")
			// The URL may carry a secret in its path (Slack's do): only its host is logged.
			n.cfg.Log.Warn().Str("approval", e.Approval).Str("type", e.Type).Str("host", hostOf(target)).Str("error", errText(err)).
				Msg("notify: the webhook was not delivered")
			return
		}
		n.cfg.Count("retried")
		select {
		case <-time.After(wait):
		case <-n.stop:
			// Closing: the remaining attempts at once, no more waits
			// (Close bounds how long it waits for them).
			wait = 0
		}
		wait *= 2
	}
}

func (n *Notifier) send(target string, e Event, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "procgraph-notify")
	req.Header.Set(EventHeader, e.Type)
	if len(n.cfg.Secret) > 0 {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req.Header.Set(TimestampHeader, ts)
		req.Header.Set(SignatureHeader, Sign(n.cfg.Secret, ts, body))
	}
	resp, err := n.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %d", resp.StatusCode)
	}
	return nil
}

// body is e as the configured format has it.
func (n *Notifier) body(e Event) ([]byte, error) {
	if n.cfg.Format == FormatSlack {
		return json.Marshal(slackBody(e))
	}
	return json.Marshal(e)
}

// slackBody is e as a Slack incoming webhook takes it: a text (the
// notification's fallback) and blocks.
func slackBody(e Event) map[string]any {
	title := map[string]string{TypePending: "An approval is waiting", TypeResolved: "An approval was " + e.Status, TypeExpired: "An approval expired"}[e.Type]
	text := fmt.Sprintf("%s: %s (session %s, by %s)", title, slackEscape(e.Summary), slackEscape(e.Session), slackEscape(e.RequestedBy))
	fields := []map[string]string{
		{"type": "mrkdwn", "text": "*Approval*\n" + slackEscape(e.Approval)},
		{"type": "mrkdwn", "text": "*Expires*\n" + e.ExpiresAt.UTC().Format(time.RFC3339)},
		{"type": "mrkdwn", "text": "*Tools*\n" + slackEscape(strings.Join(e.Signature, ", "))},
		{"type": "mrkdwn", "text": "*State-changing*\n" + slackEscape(orNone(strings.Join(e.StateChangingTools, ", ")))},
	}
	blocks := []map[string]any{
		{"type": "section", "text": map[string]string{"type": "mrkdwn", "text": text}},
		{"type": "section", "fields": fields},
	}
	if e.Console != "" {
		blocks = append(blocks, map[string]any{"type": "actions", "elements": []map[string]any{
			{"type": "button", "text": map[string]string{"type": "plain_text", "text": "Open in the console"}, "url": e.Console},
		}})
	}
	return map[string]any{"text": text, "blocks": blocks}
}

// slackEscape escapes what Slack's mrkdwn reads as markup.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return "?"
}

// errText is an error's text without the URL it may quote.
func errText(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}
