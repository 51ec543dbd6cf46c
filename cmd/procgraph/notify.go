package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/notify"
)

// newNotifier starts the webhook notifier of the configuration (package
// notify; docs/design.md "Notifications") and returns what the gate tells
// of each stored turn's change (gate.Options.OnTurn): nil without
// --notify-webhook. It is closed, its queue drained for up to
// shutdownGrace, when Main closes.
func (m *Main) newNotifier(reg *metrics.Registry) (func(gate.Turn), error) {
	cfg := m.Config
	if len(cfg.NotifyWebhooks) == 0 {
		if cfg.NotifySecretFile != "" {
			return nil, fmt.Errorf("--notify-secret-file / PROCGRAPH_NOTIFY_SECRET_FILE is set without --notify-webhook: nothing would be signed")
		}
		return nil, nil
	}
	var secret []byte
	if cfg.NotifySecretFile != "" {
		b, err := os.ReadFile(cfg.NotifySecretFile)
		if err != nil {
			return nil, fmt.Errorf("--notify-secret-file / PROCGRAPH_NOTIFY_SECRET_FILE: %v", err)
		}
		if secret = []byte(strings.TrimSpace(string(b))); len(secret) < 16 {
			return nil, fmt.Errorf("--notify-secret-file / PROCGRAPH_NOTIFY_SECRET_FILE: the key is %d bytes; at least 16 are needed", len(secret))
		}
	} else {
		m.Logger.Warn().Msg("notify: --notify-webhook without --notify-secret-file: the posts are not signed")
	}
	n, err := notify.New(notify.Config{URLs: cfg.NotifyWebhooks, Secret: secret, Format: cfg.NotifyFormat,
		Count: reg.CountNotification, Log: m.Logger})
	if err != nil {
		return nil, fmt.Errorf("--notify-webhook: %v", err)
	}
	m.onClose(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		n.Close(ctx)
		return nil
	})
	return func(t gate.Turn) {
		if e, ok := turnEvent(t, m.consoleURL("/approvals/"+url.PathEscape(t.ID)), time.Now()); ok {
			n.Notify(e)
		}
	}, nil
}

// consoleURL is the console's page at hash path page, at --public-url or,
// without one, the address this server listens on.
func (m *Main) consoleURL(page string) string {
	base := strings.TrimSuffix(m.Config.PublicURL, "/")
	if base == "" && m.ln != nil {
		base = m.localURL()
	}
	return base + "/ui/#" + page
}

// turnEvent is the notification of a stored turn's change at now, and
// whether people are told of it: a turn that begins to wait, one an
// operator approved or rejected or its requester cancelled, and one that
// expired. It names the approval; the turn's code and arguments are not in
// a Turn, and nothing of them is in an event.
func turnEvent(t gate.Turn, console string, now time.Time) (notify.Event, bool) {
	var typ string
	switch t.Status {
	case gate.TurnPending:
		typ = notify.TypePending
	case gate.TurnApproved, gate.TurnRejected, gate.TurnCancelled:
		typ = notify.TypeResolved
	case gate.TurnExpired:
		typ = notify.TypeExpired
	default:
		return notify.Event{}, false
	}
	return notify.Event{Type: typ, Approval: t.ID, Status: string(t.Status), Session: t.SessionID, Summary: t.Summary,
		Signature: t.Signature, StateChangingTools: t.StateChangingTools, RequestedBy: t.RequestedBy,
		ExpiresAt: t.Deadline.UTC(), Console: console, At: now.UTC()}, true
}
