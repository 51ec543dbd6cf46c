package mcpdispatch

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
)

// DefaultRefreshInterval is how often the catalogue is refreshed from the
// servers when not told otherwise (serve's --catalogue-refresh).
const DefaultRefreshInterval = 5 * time.Minute

// CatalogueSink takes what one server lists now, as catalogue entries, and
// merges it into the catalogue (procedures.Service.RefreshCatalogue).
type CatalogueSink interface {
	RefreshCatalogue(ctx context.Context, server string, listed []procedures.Tool) (procedures.Refreshed, error)
}

// RefreshOptions configure a Refresher.
type RefreshOptions struct {
	// Interval is the time between two refreshes of a server; 0 refreshes
	// only at start (RefreshAll) and when a server announces
	// tools/list_changed or reconnects (Notify).
	Interval time.Duration
	// Logger receives what a refresh changed (names, never schemas) and
	// why a server could not be listed.
	Logger zerolog.Logger
}

// Refresher keeps the catalogue following the servers of an upstreams
// file (docs/design.md "Drift"): each server is listed on its own — at
// start, when it announces notifications/tools/list_changed or a new
// session is established (Notify, the servers' Options.OnToolsChanged),
// and every Interval — and what it lists is fed to the sink, which writes
// the catalogue only when something changed. A server that cannot be
// listed changes nothing (its tools are not taken for removed). One
// server's refresh never waits for another's, and never for a call: a
// listing takes no call slot (Options.MaxConcurrency).
type Refresher struct {
	opts    RefreshOptions
	servers []*refreshed
	byKey   map[string]*refreshed
}

// refreshed is one server's refresh state.
type refreshed struct {
	up   Upstream
	wake chan struct{} // a pending Notify (at most one)
	// down: the server did not answer at start (MarkDown) and has not
	// connected since (Notify): RefreshAll does not wait for it.
	down atomic.Bool

	mu sync.Mutex // one refresh of the server at a time
	d  *Dispatcher
	// What was logged last, not to log it again at every refresh.
	failing              bool
	lastSkipped, lastOps string
}

// NewRefresher returns a Refresher of the servers of ups (Attach gives it
// their dispatchers).
func NewRefresher(ups []Upstream, opts RefreshOptions) *Refresher {
	r := &Refresher{opts: opts, byKey: make(map[string]*refreshed, len(ups))}
	for _, u := range ups {
		s := &refreshed{up: u, wake: make(chan struct{}, 1)}
		r.servers = append(r.servers, s)
		r.byKey[u.Key] = s
	}
	return r
}

// Attach gives r the dispatchers of its servers, by key (OpenUpstreams).
func (r *Refresher) Attach(ds map[string]*Dispatcher) {
	for key, d := range ds {
		if s := r.byKey[key]; s != nil {
			s.mu.Lock()
			s.d = d
			s.mu.Unlock()
		}
	}
}

// MarkDown tells r that server did not answer at start: RefreshAll does
// not wait for it (a server that does not answer may take the whole
// connection timeout again); it is refreshed when it connects (Notify).
func (r *Refresher) MarkDown(server string) {
	if s := r.byKey[server]; s != nil {
		s.down.Store(true)
	}
}

// Notify asks for a refresh of server soon (Run does it); it never
// blocks, and notifications that arrive before the refresh are one.
func (r *Refresher) Notify(server string) {
	s := r.byKey[server]
	if s == nil {
		return
	}
	s.down.Store(false)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// RefreshAll refreshes every server at once and waits for all (serve's
// start), but those marked down: the error of each server that could not
// be listed or merged, by key (nil for the others).
func (r *Refresher) RefreshAll(ctx context.Context, sink CatalogueSink) map[string]error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(map[string]error, len(r.servers))
	for _, s := range r.servers {
		if s.down.Load() {
			errs[s.up.Key] = errNotAnswered
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.refresh(ctx, s, sink)
			mu.Lock()
			errs[s.up.Key] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return errs
}

// errNotAnswered is RefreshAll's error of a server marked down.
var errNotAnswered = errors.New("the server did not answer at start: it is refreshed when it connects")

// Refresh refreshes one server now and returns what changed.
func (r *Refresher) Refresh(ctx context.Context, server string, sink CatalogueSink) (procedures.Refreshed, error) {
	s := r.byKey[server]
	if s == nil {
		return procedures.Refreshed{Server: server}, nil
	}
	return r.refresh(ctx, s, sink)
}

// Run refreshes each server on its Notify and every Interval until ctx
// ends, each server in its own goroutine.
func (r *Refresher) Run(ctx context.Context, sink CatalogueSink) {
	var wg sync.WaitGroup
	for _, s := range r.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tick <-chan time.Time
			if r.opts.Interval > 0 {
				t := time.NewTicker(r.opts.Interval)
				defer t.Stop()
				tick = t.C
			}
			for {
				select {
				case <-ctx.Done():
					return
				case <-s.wake:
				case <-tick:
				}
				_, _ = r.refresh(ctx, s, sink)
			}
		}()
	}
	wg.Wait()
}

// refresh lists s's tools, converts them (CatalogueOf, with the server's
// prefix and trust) and feeds them to sink; it logs what changed, and a
// failure once per run of failures.
func (r *Refresher) refresh(ctx context.Context, s *refreshed, sink CatalogueSink) (procedures.Refreshed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := procedures.Refreshed{Server: s.up.Key}
	if s.d == nil {
		return out, nil
	}
	log := r.opts.Logger.With().Str("server", s.up.Key).Logger()
	listed, err := s.d.ListTools(ctx)
	if err == nil {
		var tools []procedures.Tool
		var skipped []Skipped
		tools, skipped, err = CatalogueOf([]Listed{{Server: s.up.Key, Prefix: s.up.Prefix, TrustAnnotations: s.up.TrustAnnotations, Tools: listed}})
		s.logSkipped(log, skipped)
		if err == nil {
			out, err = sink.RefreshCatalogue(ctx, s.up.Key, tools)
		}
	}
	if err != nil {
		if ctx.Err() == nil && !s.failing {
			log.Warn().Str("error", text.Bounded(err.Error(), maxErrorBytes)).
				Msg("catalogue refresh: the server's tools could not be listed or merged; its catalogue entries are kept as they are")
		}
		s.failing = ctx.Err() == nil
		return out, err
	}
	s.failing = false
	if out.Changes() {
		log.Info().Strs("added", out.Added).Strs("changed", out.Changed).Strs("removed", out.Removed).
			Msg("catalogue refresh: the catalogue follows what the server lists")
	}
	if ops := strings.Join(out.Kept, ",") + "|" + strings.Join(out.Taken, ","); ops != s.lastOps {
		s.lastOps = ops
		if len(out.Kept) > 0 {
			log.Warn().Strs("tools", out.Kept).
				Msg("catalogue refresh: the operator's entries differ from what the server lists (or it no longer lists them): kept as they are")
		}
		if len(out.Taken) > 0 {
			log.Warn().Strs("tools", out.Taken).
				Msg("catalogue refresh: the server lists tools under names another server's entries hold: not added")
		}
	}
	return out, nil
}

// logSkipped logs the tools CatalogueOf skipped, when they differ from
// the last refresh's.
func (s *refreshed) logSkipped(log zerolog.Logger, skipped []Skipped) {
	var b strings.Builder
	for _, sk := range skipped {
		b.WriteString(sk.Name)
		b.WriteByte(0)
	}
	if b.String() == s.lastSkipped {
		return
	}
	s.lastSkipped = b.String()
	for _, sk := range skipped {
		log.Warn().Str("tool", text.VisibleLine(sk.Name)).Str("reason", sk.Reason).Msg("catalogue refresh: upstream tool not callable")
	}
}
