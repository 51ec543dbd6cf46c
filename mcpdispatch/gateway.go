package mcpdispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
)

// Caller is what the Gateway sends a server's calls to: a Dispatcher, or
// any other dispatcher (replay.HTTPDispatcher for --upstream-http).
type Caller interface {
	Dispatch(ctx context.Context, tool string, args map[string]any) (any, error)
}

// CatalogueFunc returns the catalogue calls are routed by.
type CatalogueFunc func(ctx context.Context) (*procedures.Catalogue, error)

// Gateway is a replay.Dispatcher over several upstream servers, by key. A
// call of the catalogue tool NAME goes to the server its catalogue entry
// names (procedures.Tool.Server), under the entry's name on that server
// (Tool.WireName: upstream_name, or NAME when it has none). A tool the
// catalogue does not list, or whose server is not configured, is refused
// before anything is sent: a call never goes to a server by default.
type Gateway struct {
	servers   map[string]Caller
	closers   []func() error
	catalogue CatalogueFunc
	stop      context.CancelFunc
	wg        sync.WaitGroup
	status    gatewayStatus // for Status (status.go)
}

// NewGateway routes calls to servers (by key; "" is the unnamed server of
// the --upstream-* flags) by the tools of catalogue.
func NewGateway(servers map[string]Caller, catalogue CatalogueFunc) *Gateway {
	return &Gateway{servers: servers, catalogue: catalogue}
}

// Route sets where the catalogue is read (before the first call).
func (g *Gateway) Route(catalogue CatalogueFunc) { g.catalogue = catalogue }

// Dispatch calls the catalogue tool name on its server, routed by the
// catalogue read now (see DispatchWith).
func (g *Gateway) Dispatch(ctx context.Context, name string, args map[string]any) (any, error) {
	if g.catalogue == nil {
		return nil, fmt.Errorf("tool %s: no catalogue to route the call by", name)
	}
	cat, err := g.catalogue(ctx)
	if err != nil {
		return nil, fmt.Errorf("tool %s: the catalogue could not be read to route the call", name)
	}
	return g.DispatchWith(ctx, cat, name, args)
}

// DispatchWith calls the catalogue tool name on the server cat's entry
// names, under its upstream name: a replay routes each call by the
// catalogue its run was decided and its arguments checked with, so the
// call reaches the tool that was checked, and no store is read per call.
func (g *Gateway) DispatchWith(ctx context.Context, cat *procedures.Catalogue, name string, args map[string]any) (any, error) {
	if cat == nil {
		return nil, fmt.Errorf("tool %s: no catalogue to route the call by", name)
	}
	t, ok := cat.Tool(name)
	if !ok {
		return nil, fmt.Errorf("tool %s is not in the catalogue", name)
	}
	srv, ok := g.servers[t.Server]
	if !ok {
		if t.Server == "" {
			return nil, fmt.Errorf("tool %s names no server, and no unnamed upstream (--upstream-*) is configured", name)
		}
		return nil, fmt.Errorf("tool %s: its server %q is not configured", name, t.Server)
	}
	out, err := srv.Dispatch(ctx, t.WireName(), args)
	if err != nil && t.Server != "" {
		return nil, withServer(t.Server, err)
	}
	return out, err
}

// Servers returns the configured keys, sorted.
func (g *Gateway) Servers() []string {
	keys := make([]string, 0, len(g.servers))
	for k := range g.servers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Close stops supervising and closes every server (stopping the commands
// procgraph started).
func (g *Gateway) Close() error {
	if g.stop != nil {
		g.stop()
	}
	var err error
	for _, c := range g.closers {
		err = errors.Join(err, c())
	}
	g.wg.Wait()
	return err
}

// GatewayOptions configure OpenUpstreams.
type GatewayOptions struct {
	// Base is every server's Options before the file's settings (Logger,
	// MaxResultBytes…).
	Base Options
	// Supervise keeps every server connected (Dispatcher.Supervise) until
	// Close: serve. Without it the servers connect on their first use
	// (tools import).
	Supervise bool
	// Stderr, when set, receives each command server's standard error
	// line by line as "server KEY: LINE" (escaped), instead of the log.
	Stderr io.Writer
	// OnToolsChanged, when set, is each server's Options.OnToolsChanged
	// with its key (Refresher.Notify).
	OnToolsChanged func(server string)
}

// OpenUpstreams opens a Dispatcher per server of ups, under its key. What
// cannot work whatever happens later (a command not on PATH) is an error
// naming the server, and nothing is left running; a server that does not
// answer is not: with Supervise it is connected in the background, with
// backoff, and its calls fail fast until it answers (Connect reports who
// answered at start).
func OpenUpstreams(ctx context.Context, ups []Upstream, opts GatewayOptions) (*Gateway, map[string]*Dispatcher, error) {
	g := &Gateway{servers: map[string]Caller{}}
	ds := map[string]*Dispatcher{}
	for _, u := range ups {
		base := opts.Base
		base.Lazy = true
		if opts.Stderr != nil && len(u.Command) > 0 {
			base.Stderr = &prefixedLines{w: opts.Stderr, prefix: "server " + u.Key + ": "}
		}
		if changed := opts.OnToolsChanged; changed != nil {
			key := u.Key
			base.OnToolsChanged = func() { changed(key) }
		}
		d, err := Open(ctx, u.source(base))
		if err != nil {
			_ = g.Close()
			return nil, nil, fmt.Errorf("upstream server %q: %v", u.Key, err)
		}
		g.servers[u.Key], ds[u.Key] = d, d
		g.closers = append(g.closers, d.Close)
	}
	if opts.Supervise {
		bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
		g.stop = cancel
		for _, d := range ds {
			g.wg.Add(1)
			go func() { defer g.wg.Done(); d.Supervise(bg) }()
		}
	}
	return g, ds, nil
}

// Connect establishes a session with each of ds at once and returns, by
// key, the error of each that could not be reached (nil for those that
// answered).
func Connect(ctx context.Context, ds map[string]*Dispatcher) map[string]error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := map[string]error{}
	for key, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := d.Session(ctx)
			mu.Lock()
			errs[key] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return errs
}

// ListAll lists the tools of every server of ds and builds their
// catalogue (CatalogueOf) with each server's prefix and trust from ups. A
// server that cannot be listed is an error naming it: an import is never
// silently partial.
func ListAll(ctx context.Context, ups []Upstream, ds map[string]*Dispatcher) ([]procedures.Tool, []Skipped, error) {
	var listed []Listed
	for _, u := range ups {
		d, ok := ds[u.Key]
		if !ok {
			continue
		}
		tools, err := d.ListTools(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("upstream server %q: %v", u.Key, err)
		}
		listed = append(listed, Listed{Server: u.Key, Prefix: u.Prefix, TrustAnnotations: u.TrustAnnotations, Tools: tools})
	}
	return CatalogueOf(listed)
}

// ImportUpstreamsJSON is `procgraph tools import --upstreams`: it lists
// every server of ups and writes their catalogue, {"tools": [...]}, to w,
// and one line per skipped tool and per line a command server wrote on
// its standard error to warn. A server that cannot be reached or listed,
// and two tools that map to one name, are errors.
func ImportUpstreamsJSON(ctx context.Context, w, warn io.Writer, ups []Upstream, base Options) error {
	g, ds, err := OpenUpstreams(ctx, ups, GatewayOptions{Base: base, Stderr: warn})
	if err != nil {
		return err
	}
	defer g.Close()
	tools, skipped, err := ListAll(ctx, ups, ds)
	warnSkipped(warn, skipped)
	if err != nil {
		return err
	}
	return writeCatalogue(w, tools)
}

// prefixedLines writes each line it is given to w after prefix, bounded
// and escaped as the log's lines are.
type prefixedLines struct {
	w      io.Writer
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (p *prefixedLines) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := indexNewline(p.buf)
		if i < 0 {
			if len(p.buf) > maxStderrLine {
				p.emit(p.buf)
				p.buf = p.buf[:0]
			}
			return len(b), nil
		}
		p.emit(p.buf[:i])
		p.buf = p.buf[i+1:]
	}
}

func (p *prefixedLines) emit(line []byte) {
	fmt.Fprintf(p.w, "%s%s\n", p.prefix, text.VisibleLine(text.Bounded(string(line), maxStderrLine)))
}

func indexNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// LogRoutes logs, once, each tool of cat whose server is not configured
// in g: its calls will fail until the catalogue or the servers change.
func (g *Gateway) LogRoutes(cat *procedures.Catalogue, log zerolog.Logger) {
	if cat == nil {
		return
	}
	missing := map[string]int{}
	for _, t := range cat.Tools {
		if _, ok := g.servers[t.Server]; !ok {
			missing[t.Server]++
		}
	}
	for key, n := range missing {
		log.Warn().Str("server", key).Int("tools", n).Msg("catalogue tools name a server that is not configured: their calls fail")
	}
}
