package mcpdispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/internal/text"
)

// Defaults for Options.
const (
	DefaultCallTimeout    = 30 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	DefaultMinBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMaxResultBytes = 4 << 20
	maxErrorBytes         = 512
)

// Options configure a Dispatcher. Zero fields take defaults.
type Options struct {
	// CallTimeout bounds one tool call, a reconnection included; default 30s.
	CallTimeout time.Duration
	// ReplayTimeout, when larger than CallTimeout, bounds a call instead:
	// serve sets it to --replay-timeout, so a replay's call is bounded by
	// the larger of its server's timeout and the replay's (and by the
	// run's own deadline, whichever ends first).
	ReplayTimeout time.Duration
	// ConnectTimeout bounds establishing a session; default 10s.
	ConnectTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait after a failed connection
	// attempt, doubling per consecutive failure; defaults 100ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// MaxResultBytes bounds a tool result as JSON; default 4 MiB. Over
	// HTTP, a response body larger than twice that plus 1 MiB is not read
	// past that size (the call fails).
	MaxResultBytes int64
	// Lazy skips the connection attempt in NewHTTP and NewCommand: the
	// first call connects. Without it, a failed first connection is an error.
	Lazy bool
	// HTTPClient sends NewHTTP's requests; a fresh http.Client when nil.
	HTTPClient *http.Client
	// Header is added to every NewHTTP request (e.g. an Authorization
	// header for the upstream).
	Header http.Header
	// Env is NewCommand's environment. When nil, the command gets
	// procgraph's environment without the variables that start with NEO4J_
	// or PROCGRAPH_ (store credentials and procgraph's own settings).
	Env []string
	// Dir is NewCommand's working directory; procgraph's when empty.
	Dir string
	// Stderr receives the command's standard error. When nil, each line is
	// logged through Logger (bounded to 2 KiB).
	Stderr io.Writer
	// Logger receives session events (connected, lost, backing off), never
	// arguments or results. Zero value: silent.
	Logger zerolog.Logger
	// Server is the server's key in the upstreams file, named in every log
	// record ("server") and message; "" for the unnamed server.
	Server string
	// MaxConcurrency bounds the calls in flight on the server; a call
	// waits for a slot within its own deadline. 0: no bound.
	MaxConcurrency int
	// ProtocolVersion is the MCP revision offered first; "" for the
	// newest the SDK speaks. A server that refuses it is offered each
	// older revision the SDK speaks (mcp.SupportedProtocolVersions) in
	// turn; the one it accepted is logged and told by Protocol.
	ProtocolVersion string
	// OnToolsChanged, when set, is called when the server announces
	// notifications/tools/list_changed and when a new session is
	// established (a restarted server may list other tools): the catalogue
	// refresh's trigger (Refresher.Notify). It must not block.
	OnToolsChanged func()
}

func (o *Options) defaults() {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	o.CallTimeout = max(o.CallTimeout, o.ReplayTimeout)
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
}

// ErrClosed is returned by calls on a closed Dispatcher.
var ErrClosed = errors.New("the upstream MCP dispatcher is closed")

// Dispatcher is a replay.Dispatcher over one upstream MCP server. It is safe
// for concurrent use; concurrent calls share the session, each answered
// on its own (JSON-RPC ids): a slow call delays no other.
type Dispatcher struct {
	target    string // what the upstream is, for messages: the URL or the command
	transport func() mcp.Transport
	client    *mcp.Client
	log       zerolog.Logger
	slots     chan struct{} // one per call in flight, when MaxConcurrency bounds them
	lost      chan struct{} // signalled when the current session is dropped (Supervise)

	stats dispatcherStats // for Status (status.go)

	mu         sync.Mutex
	opts       Options // CallTimeout is read under mu (tests change it)
	session    *conn
	retired    map[*conn]struct{} // replaced sessions with calls still in flight
	connecting chan struct{}      // closed when the connection attempt in flight ends
	failures   int                // consecutive failed connection attempts
	retryAt    time.Time          // no attempt before this time
	protocol   string             // the revision the last session negotiated
	closed     bool
}

// conn is one session and the calls in flight on it (guarded by
// Dispatcher.mu).
type conn struct {
	s        *mcp.ClientSession
	calls    int  // calls in flight
	timeouts int  // consecutive calls on it that timed out
	retired  bool // replaced or ended: no new call; closed once calls is 0
}

// NewHTTP returns a Dispatcher over the streamable HTTP MCP endpoint rawURL,
// an absolute http or https URL. Unless opts.Lazy, it connects first and
// returns the error if it cannot.
func NewHTTP(ctx context.Context, rawURL string, opts Options) (*Dispatcher, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream MCP URL %q is not an absolute http(s) URL", rawURL)
	}
	opts.defaults()
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	if len(opts.Header) > 0 {
		c := *hc
		c.Transport = headerTransport{base: hc.Transport, header: opts.Header.Clone()}
		hc = &c
	}
	c := *hc
	c.Transport = limitTransport{base: hc.Transport, max: responseLimit(opts.MaxResultBytes)}
	hc = &c
	endpoint := u.String()
	d := newDispatcher(u.Redacted(), opts, func() mcp.Transport {
		// No standalone SSE stream unless tools/list_changed is listened
		// to (OnToolsChanged: a server of a 2025 revision sends it there):
		// otherwise procgraph only sends calls and reads their answers.
		// MaxRetries bounds resuming a stream.
		return &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: opts.OnToolsChanged == nil, MaxRetries: 2}
	})
	d.stats.transport = TransportHTTP
	return d.start(ctx)
}

// NewCommand returns a Dispatcher over an MCP server that procgraph runs as
// argv and talks to over stdio. The process is started when a session is
// established, restarted when the session breaks (on the next call), and
// stopped by Close. Unless opts.Lazy, it starts the process first and
// returns the error if the session cannot be established.
func NewCommand(ctx context.Context, argv []string, opts Options) (*Dispatcher, error) {
	if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
		return nil, errors.New("the upstream MCP command is empty")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("upstream MCP command %q: %v", argv[0], err)
	}
	opts.defaults()
	env := opts.Env
	if env == nil {
		env = childEnv(os.Environ())
	}
	var stderr io.Writer = opts.Stderr
	if stderr == nil {
		log := opts.Logger
		if opts.Server != "" {
			log = log.With().Str("server", opts.Server).Logger()
		}
		stderr = &lineLogger{log: log, cmd: argv[0]}
	}
	args := append([]string(nil), argv[1:]...)
	d := newDispatcher(argv[0], opts, func() mcp.Transport {
		cmd := exec.Command(path, args...)
		cmd.Env, cmd.Dir, cmd.Stderr = env, opts.Dir, stderr
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	})
	d.stats.transport = TransportStdio
	return d.start(ctx)
}

func newDispatcher(target string, opts Options, transport func() mcp.Transport) *Dispatcher {
	var copts *mcp.ClientOptions
	if changed := opts.OnToolsChanged; changed != nil {
		copts = &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed() }}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "procgraph", Version: "v1"}, copts)
	log := opts.Logger
	if opts.Server != "" {
		log = log.With().Str("server", opts.Server).Logger()
	}
	d := &Dispatcher{target: target, transport: transport, client: client, opts: opts, log: log, lost: make(chan struct{}, 1), retired: map[*conn]struct{}{}}
	if opts.MaxConcurrency > 0 {
		d.slots = make(chan struct{}, opts.MaxConcurrency)
	}
	return d
}

func (d *Dispatcher) start(ctx context.Context) (*Dispatcher, error) {
	if d.opts.Lazy {
		return d, nil
	}
	if _, err := d.sessionFor(ctx, false); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("%s %s: %v", d.label(), d.target, err)
	}
	return d, nil
}

// sessionFor returns the live session, establishing one if there is none;
// with hold, the call it is for is counted in flight on it (release ends
// it). Concurrent callers wait for one attempt; while backing off after a
// failure, it fails at once.
func (d *Dispatcher) sessionFor(ctx context.Context, hold bool) (*conn, error) {
	for {
		d.mu.Lock()
		switch {
		case d.closed:
			d.mu.Unlock()
			return nil, ErrClosed
		case d.session != nil:
			c := d.session
			if hold {
				c.calls++
			}
			d.mu.Unlock()
			return c, nil
		case d.connecting != nil:
			wait := d.connecting
			d.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if wait := time.Until(d.retryAt); wait > 0 {
			d.mu.Unlock()
			return nil, &backingOff{failures: d.failures, wait: wait}
		}
		done := make(chan struct{})
		d.connecting = done
		d.mu.Unlock()

		s, err := d.connect(ctx)

		d.mu.Lock()
		d.connecting = nil
		close(done)
		switch {
		case err != nil && ctx.Err() != nil:
			// The caller gave up: not the upstream's failure.
			d.mu.Unlock()
			return nil, ctx.Err()
		case err != nil:
			d.failures++
			backoff := d.backoff(d.failures)
			d.retryAt = time.Now().Add(backoff)
			d.mu.Unlock()
			d.log.Warn().Str("upstream", d.target).Int("failures", d.failures).Dur("backoff", backoff).
				Str("error", text.Bounded(err.Error(), maxErrorBytes)).Msg("upstream MCP: connection failed")
			return nil, err
		case d.closed:
			d.mu.Unlock()
			_ = s.Close()
			return nil, ErrClosed
		}
		c := &conn{s: s}
		protocol := ""
		if r := s.InitializeResult(); r != nil {
			protocol = r.ProtocolVersion
		}
		d.failures, d.retryAt, d.session, d.protocol = 0, time.Time{}, c, protocol
		d.mu.Unlock()
		d.log.Info().Str("upstream", d.target).Str("session", s.ID()).Str("protocol_version", protocol).Msg("upstream MCP: connected")
		go d.watch(c)
		if d.opts.OnToolsChanged != nil {
			d.opts.OnToolsChanged() // a new session: what the server lists may have changed
		}
		continue // counted (hold) under the lock, as any caller of a live session
	}
}

// Protocol is the MCP revision the last session established with the
// server negotiated ("" before the first): what a status page shows.
func (d *Dispatcher) Protocol() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.protocol
}

// callTimeout is the bound of a call starting now.
func (d *Dispatcher) callTimeout() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opts.CallTimeout
}

// release ends a call that sessionFor counted on c: answered (a timeout
// streak on c ends) or timedOut (maxTimeouts of them in a row retire c: it
// is taken for hung). A retired session is closed with its last call, so
// replacing a session fails no call in flight on it.
func (d *Dispatcher) release(c *conn, answered, timedOut bool) {
	d.mu.Lock()
	c.calls--
	switch {
	case answered:
		c.timeouts = 0
	case timedOut:
		c.timeouts++
	}
	hung := timedOut && c.timeouts >= maxTimeouts && !c.retired
	if hung {
		d.retire(c)
	}
	closeNow := c.retired && c.calls == 0
	if closeNow {
		delete(d.retired, c)
	}
	d.mu.Unlock()
	if hung {
		d.log.Warn().Str("upstream", d.target).Int("timeouts", maxTimeouts).Msg("upstream MCP: calls keep timing out; replacing the session (its calls in flight may finish)")
		d.signalLost()
	}
	if closeNow {
		go func() { _ = c.s.Close() }()
	}
}

// retire takes c out of use (d.mu held): no new call goes to it, and it is
// closed once its calls in flight end (release).
func (d *Dispatcher) retire(c *conn) {
	c.retired = true
	if d.session == c {
		d.session = nil
	}
	if c.calls > 0 {
		d.retired[c] = struct{}{}
	}
}

// signalLost wakes Supervise to establish a new session.
func (d *Dispatcher) signalLost() {
	select {
	case d.lost <- struct{}{}:
	default:
	}
}

// backingOff is the error of a call made while waiting to reconnect.
type backingOff struct {
	failures int
	wait     time.Duration
}

func (e *backingOff) Error() string {
	return fmt.Sprintf("unavailable after %d failed connection attempts; next attempt in %s", e.failures, e.wait.Round(time.Millisecond))
}

// connect establishes a new session within ConnectTimeout, offering the
// configured revision (the newest the SDK speaks by default), then, while
// the server refuses them, each older one (revisions).
func (d *Dispatcher) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.ConnectTimeout)
	defer cancel()
	offers := revisions(d.opts.ProtocolVersion)
	for i, v := range offers {
		s, err := d.client.Connect(ctx, d.transport(), &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err == nil {
			return s, nil
		}
		if !refusedRevision(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("connecting: %v", err)
		}
		d.log.Warn().Str("upstream", d.target).Str("protocol_version", v).Str("error", text.Bounded(err.Error(), maxErrorBytes)).
			Msg("upstream MCP: the server refused the protocol revision offered")
		if i == len(offers)-1 {
			return nil, fmt.Errorf("connecting: the server refused every protocol revision procgraph speaks from %s down to %s: %v", offers[0], v, err)
		}
	}
	return nil, errors.New("connecting: no protocol revision to offer")
}

// revisions are the MCP revisions to offer, in order: first (or the newest
// the SDK speaks when "" or not one it speaks), then every older one.
func revisions(first string) []string {
	all := mcp.SupportedProtocolVersions() // newest first
	if i := slices.Index(all, first); i > 0 {
		return all[i:]
	}
	return all
}

// refusedRevision reports whether a failed connection attempt was the
// server's answer to the handshake (a JSON-RPC error: it is reachable, and
// may accept an older revision), not a transport failure.
func refusedRevision(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code != codeRejectedByTransport
}

// backoff is the wait after n consecutive failures, with ±20% jitter.
func (d *Dispatcher) backoff(n int) time.Duration {
	b := d.opts.MinBackoff
	for i := 1; i < n && b < d.opts.MaxBackoff; i++ {
		b *= 2
	}
	b = min(b, d.opts.MaxBackoff)
	return time.Duration(float64(b) * (0.8 + 0.4*rand.Float64()))
}

// watch drops c when its session ends (the process exited, the
// connection closed).
func (d *Dispatcher) watch(c *conn) {
	err := c.s.Wait()
	if d.drop(c) {
		ev := d.log.Warn().Str("upstream", d.target).Str("session", c.s.ID())
		if err != nil {
			ev = ev.Str("error", text.Bounded(err.Error(), maxErrorBytes))
		}
		ev.Msg("upstream MCP: session ended; the next call re-establishes it")
	}
}

// drop forgets c, whose session broke, if it is the current session, and
// closes it at once (reaping a command's process): its calls in flight
// fail as they would anyway. It reports whether c was current.
func (d *Dispatcher) drop(c *conn) bool {
	d.mu.Lock()
	current := d.session == c
	if current {
		d.session = nil
	}
	c.retired = true
	delete(d.retired, c)
	d.mu.Unlock()
	if current {
		go func() { _ = c.s.Close() }()
		d.signalLost()
	}
	return current
}

// Supervise keeps a session established until ctx ends or d is closed:
// it connects at once, again as soon as a session is lost, and after a
// failed attempt when its backoff ends — so a server that was down at
// start, or went down, is back without waiting for a call.
func (d *Dispatcher) Supervise(ctx context.Context) {
	for {
		_, err := d.sessionFor(ctx, false)
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return
		}
		var retry <-chan time.Time // after a failure: when its backoff ends
		var timer *time.Timer
		if err != nil {
			d.mu.Lock()
			wait := max(time.Until(d.retryAt), d.opts.MinBackoff)
			d.mu.Unlock()
			timer = time.NewTimer(wait)
			retry = timer.C
		}
		select {
		case <-ctx.Done():
		case <-d.lost:
		case <-retry:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// label is how messages name the server.
func (d *Dispatcher) label() string {
	if d.opts.Server == "" {
		return "upstream MCP server"
	}
	return fmt.Sprintf("upstream MCP server %q", d.opts.Server)
}

// Close ends the session (stopping a command's process), and the replaced
// ones whose calls were still in flight, and makes every later call fail
// with ErrClosed.
func (d *Dispatcher) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	c := d.session
	d.session = nil
	retired := d.retired
	d.retired = map[*conn]struct{}{}
	d.mu.Unlock()
	d.signalLost() // Supervise ends
	var err error
	for r := range retired {
		err = errors.Join(err, d.closeSession(r.s))
	}
	if c != nil {
		err = errors.Join(err, d.closeSession(c.s))
	}
	return err
}

// closeSession closes s. A command server that did not exit once its
// input closed is stopped by a signal, as the MCP spec says (SIGTERM after
// 2 s, then SIGKILL): that is logged, not an error of Close (server-
// everything, closed within 350 ms of its start, waits a minute for an
// answer to the roots/list it sends then).
func (d *Dispatcher) closeSession(s *mcp.ClientSession) error {
	err := s.Close()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			d.log.Warn().Str("upstream", d.target).Str("signal", ws.Signal().String()).
				Msg("upstream MCP: the server did not exit when its input closed; it was stopped")
			return nil
		}
	}
	return err
}

// Session returns the current session, establishing one if needed (for
// Import and diagnostics).
func (d *Dispatcher) Session(ctx context.Context) (*mcp.ClientSession, error) {
	c, err := d.sessionFor(ctx, false)
	if err != nil {
		return nil, err
	}
	return c.s, nil
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		r.Header[k] = append([]string(nil), vs...)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// childEnv is env without procgraph's own settings and store credentials.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "NEO4J_") || strings.HasPrefix(kv, "PROCGRAPH_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
