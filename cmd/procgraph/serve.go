package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/gate"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/mcpserve"
	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/tokens"
)

var timeFormatOnce sync.Once

// shutdownGrace bounds how long in-flight requests may drain on SIGTERM.
const shutdownGrace = 30 * time.Second

// cmdServe runs the HTTP service until ctx ends, then drains in-flight
// requests and closes the sandbox pool and the store.
func cmdServe(ctx context.Context, args []string, s stdio) int {
	stdout, stderr := s.out, s.err
	cfg, err := parseServeConfig(args)
	if errors.Is(err, flag.ErrHelp) {
		printServeUsage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "procgraph serve: %v\n(procgraph serve --help lists the settings)\n", err)
		return 2
	}
	format := cfg.LogFormat
	if format == "" {
		format = logJSON
		if isTerminal(stderr) {
			format = logText
		}
	}
	m := NewMain(cfg, newFormattedLogger(stderr, cfg.LogLevel, format))
	m.Terminal, m.TerminalIsTTY = stdout, isTerminal(stdout)
	if err := m.Run(ctx); err != nil {
		// Once: a person reading text logs gets the plain line, a log
		// collector reading JSON the record.
		if format == logText {
			fmt.Fprintf(stderr, "procgraph serve: %v\n", err)
		} else {
			m.Logger.Error().Err(err).Msg("procgraph serve stopped")
		}
		return 1
	}
	return 0
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newLogger is a JSON logger at level, writing to w.
func newLogger(w io.Writer, level string) zerolog.Logger {
	return newFormattedLogger(w, level, logJSON)
}

// newFormattedLogger is a logger at level writing to w in format: JSON
// objects, or (text) zerolog's ConsoleWriter: time, level, message and
// fields on one line, coloured only when w is a terminal.
func newFormattedLogger(w io.Writer, level, format string) zerolog.Logger {
	if format == logText {
		w = zerolog.ConsoleWriter{Out: w, NoColor: !isTerminal(w), TimeFormat: time.TimeOnly}
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	// A package-wide setting: written once, so that servers started
	// concurrently in one process (tests) do not race on it.
	timeFormatOnce.Do(func() { zerolog.TimeFieldFormat = time.RFC3339Nano })
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// newDispatcher returns where replayed tool calls go, and how to close it.
// Every upstream is a Gateway, which routes each call by the catalogue
// entry of its tool (Gateway.Route is set once the service exists): the
// --upstream-* flags are its one unnamed server, --upstreams its servers
// by key, whose tools the catalogue follows (the Refresher, nil for the
// --upstream-* flags: refresh.go).
func newDispatcher(ctx context.Context, cfg *serveConfig, log zerolog.Logger) (replay.Dispatcher, *mcpdispatch.Gateway, *mcpdispatch.Refresher, func() error, error) {
	nothing := func() error { return nil }
	unnamed := func(d mcpdispatch.Caller) *mcpdispatch.Gateway {
		return mcpdispatch.NewGateway(map[string]mcpdispatch.Caller{"": d}, nil)
	}
	switch {
	case cfg.UpstreamHTTP != "":
		// The response envelope ({"result": …}) around a result of at most
		// --max-call-bytes.
		d, err := replay.NewHTTPDispatcher(cfg.UpstreamHTTP, replay.HTTPOptions{MaxResponseBytes: cfg.MaxCallBytes + 64<<10,
			Timeout: max(replay.DefaultHTTPTimeout, cfg.ReplayTimeout)}) // the larger of the upstream's bound and a replay's
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("--upstream-http / PROCGRAPH_UPSTREAM_HTTP: %v", err)
		}
		warnUnreachable(ctx, cfg.UpstreamHTTP, log)
		g := unnamed(d)
		return g, g, nil, nothing, nil
	case cfg.UpstreamMCP != "":
		d, err := mcpdispatch.NewHTTP(ctx, cfg.UpstreamMCP, upstreamOptions(cfg, log))
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("--upstream-mcp / PROCGRAPH_UPSTREAM_MCP: %v", err)
		}
		g := unnamed(d)
		return g, g, nil, d.Close, nil
	case len(cfg.UpstreamMCPCommand) > 0:
		d, err := mcpdispatch.NewCommand(ctx, cfg.UpstreamMCPCommand, upstreamOptions(cfg, log))
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("--upstream-mcp-command / PROCGRAPH_UPSTREAM_MCP_COMMAND: %v", err)
		}
		g := unnamed(d)
		return g, g, nil, d.Close, nil
	case cfg.UpstreamsFile != "":
		g, ref, err := openUpstreams(ctx, cfg, log)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return g, g, ref, g.Close, nil
	}
	return replay.DispatcherFunc(func(ctx context.Context, tool string, args map[string]any) (any, error) {
		return nil, fmt.Errorf("no upstream is configured (set --upstream-http, --upstream-mcp, --upstream-mcp-command or --upstreams)")
	}), nil, nil, nothing, nil
}

// upstreamOptions are every MCP upstream's options before its own
// settings: a replay's call is bounded by the larger of its server's
// timeout and --replay-timeout (and by the run's deadline).
func upstreamOptions(cfg *serveConfig, log zerolog.Logger) mcpdispatch.Options {
	return mcpdispatch.Options{Logger: log, MaxResultBytes: cfg.MaxCallBytes, ReplayTimeout: cfg.ReplayTimeout}
}

// openUpstreams opens the servers of the --upstreams file (docs/design.md
// "Several upstreams"). A file that does not parse, a command that is not
// on PATH, and two tools of the servers that answered mapping to one
// catalogue name refuse the start. A server that does not answer does not:
// it is logged with its key, its calls fail fast, and it is connected in
// the background with backoff (mcpdispatch.Dispatcher.Supervise).
func openUpstreams(ctx context.Context, cfg *serveConfig, log zerolog.Logger) (*mcpdispatch.Gateway, *mcpdispatch.Refresher, error) {
	setting := "--upstreams / PROCGRAPH_UPSTREAMS"
	ups, err := mcpdispatch.ReadUpstreams(cfg.UpstreamsFile)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %v", setting, cfg.UpstreamsFile, err)
	}
	ref := mcpdispatch.NewRefresher(ups, mcpdispatch.RefreshOptions{Interval: cfg.CatalogueRefresh, Logger: log})
	g, ds, err := mcpdispatch.OpenUpstreams(ctx, ups, mcpdispatch.GatewayOptions{Supervise: true,
		Base: upstreamOptions(cfg, log), OnToolsChanged: ref.Notify})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", setting, err)
	}
	ref.Attach(ds)
	answered := map[string]*mcpdispatch.Dispatcher{}
	for key, err := range mcpdispatch.Connect(ctx, ds) {
		if err != nil {
			log.Error().Str("server", key).Str("error", ptext.Bounded(err.Error(), 512)).
				Msg("upstream server did not start: its calls fail until it answers; retried with backoff")
			ref.MarkDown(key) // the start's catalogue refresh does not wait for it
			continue
		}
		answered[key] = ds[key]
	}
	tools, skipped, err := mcpdispatch.ListAll(ctx, ups, answered)
	if err != nil {
		_ = g.Close()
		return nil, nil, fmt.Errorf("%s: %v", setting, err)
	}
	for _, sk := range skipped {
		log.Warn().Str("server", sk.Server).Str("tool", ptext.VisibleLine(sk.Name)).Str("reason", sk.Reason).Msg("upstream tool not callable")
	}
	perServer := map[string]int{}
	for _, t := range tools {
		perServer[t.Server]++
	}
	for key, d := range answered {
		log.Info().Str("server", key).Int("tools", perServer[key]).Str("protocol_version", d.Protocol()).Msg("upstream server started")
	}
	return g, ref, nil
}

// newHandler serves the HTTP API at / and MCP at /mcp (automatic phase:
// read-only replays only) and /mcp/interactive. The MCP tool lists follow
// the service's change feed, which also carries what other instances
// change (Service.WatchRemote, every remoteWatchInterval; it also runs the
// process's one poller of the store's authorization revision, which the
// service's and the gate's cached grants and policies are trusted under).
// The change streams and the MCP sessions end when draining is closed.
func newHandler(ctx context.Context, svc *procedures.Service, rp *replay.Replayer, gate *gate.Gate, dumps dump.Store, tm *tokens.Manager, authn *auth.Authenticator,
	reg *metrics.Registry, sessions *mcpserve.SessionLimits, ups api.Upstreams, draining <-chan struct{}, log zerolog.Logger) (http.Handler, error) {
	exposed := mcpserve.NewExposed() // both endpoints list the same procedures: one read per change
	mcpConfig := func(phase audit.Phase) mcpserve.Config {
		return mcpserve.Config{Service: svc, Replayer: rp, Gate: gate, Phase: phase, Auth: authn, Logger: log, Sessions: sessions, Exposed: exposed,
			Draining: draining}
	}
	auto, err := mcpserve.New(mcpConfig(audit.PhaseAutomatic))
	if err != nil {
		return nil, err
	}
	inter, err := mcpserve.New(mcpConfig(audit.PhaseInteractive))
	if err != nil {
		return nil, err
	}
	go auto.Run(ctx)
	go inter.Run(ctx)
	go svc.WatchRemote(ctx, remoteWatchInterval)
	srv, err := api.New(api.Config{Service: svc, Replayer: rp, Turns: gate, Dumps: dumps, Tokens: tm, Auth: authn, Metrics: reg, Logger: log, Upstreams: ups,
		Draining: draining,
		MCPPaths: map[string]string{
			"/mcp":             "MCP (streamable HTTP), automatic phase: read-only replays only",
			"/mcp/interactive": "MCP (streamable HTTP), interactive phase",
		}})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", streaming(auto))
	mux.Handle("/mcp/interactive", streaming(inter))
	mux.Handle("/", srv)
	return api.Protect(mux, authn), nil
}

// remoteWatchInterval is how often the store is looked at for changes
// other instances made.
const remoteWatchInterval = procedures.DefaultWatchInterval

// streaming lifts the server's write timeout for MCP's long-lived
// notification streams.
func streaming(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		h.ServeHTTP(w, r)
	})
}

// runners are the sandboxes: one for the replays callers ask for, one for
// the proc__ calls those make. Nested runs have their own pool because an
// outer run keeps its worker while its nested call runs: on a shared pool,
// as many concurrent outer runs as workers would leave none for their nested
// calls. The nested pool holds MaxNesting workers per outer one, so a chain
// of the deepest nesting always finds one.
type runners struct {
	outer, nested sandbox.Runner
	pools         map[string]*sandbox.Pool
	budget        *sandbox.Budget // nil in process
}

func (r *runners) close() error {
	err := r.outer.Close()
	if r.nested != r.outer {
		err = errors.Join(err, r.nested.Close())
	}
	return err
}

// newRunners starts the sandboxes: worker processes by default.
func newRunners(cfg *serveConfig, log zerolog.Logger) (*runners, error) {
	if cfg.InProcessSandbox {
		log.Warn().Msg("replays run in the server process: no memory limit (tests and benchmarks only)")
		in := sandbox.NewInProcess()
		return &runners{outer: in, nested: in}, nil
	}
	// Admission lets MaxConcurrentReplays run at once: the replay pool
	// has a worker for each, so an admitted replay never waits for one.
	outerMax := cfg.MaxConcurrentReplays
	budget := sandbox.NewBudget(cfg.MaxInflightBytes)
	outer, err := sandbox.NewPool(sandbox.PoolConfig{Size: min(cfg.SandboxWorkers, outerMax), MaxWorkers: outerMax,
		MaxCallBytes: int(cfg.MaxCallBytes), Budget: budget, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("starting sandbox workers: %v", err)
	}
	nested, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1, MaxWorkers: outerMax * procedures.MaxNesting,
		MaxCallBytes: int(cfg.MaxCallBytes), Budget: budget, Logger: log})
	if err != nil {
		outer.Close()
		return nil, fmt.Errorf("starting sandbox workers: %v", err)
	}
	return &runners{outer: outer, nested: nested, budget: budget, pools: map[string]*sandbox.Pool{"replay": outer, "nested": nested}}, nil
}

// newAdmission is the bounded queue in front of the replay workers. The
// per-token cap, unless set, is max-concurrent-replays when tokens are
// configured (one holder can fill the workers but not the queue), and none
// without tokens (every caller is the one anonymous holder).
func newAdmission(cfg *serveConfig, authOn bool) *sandbox.Admission {
	perToken := cfg.MaxReplaysPerToken
	if perToken < 0 {
		perToken = 0
		if authOn {
			perToken = cfg.MaxConcurrentReplays
		}
	}
	queue := cfg.ReplayQueue
	if queue == 0 {
		queue = -1 // none may wait
	}
	return sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: cfg.MaxConcurrentReplays, Queue: queue, PerKey: perToken})
}

// stats reports the pools for /metrics.
func (r *runners) stats() []metrics.PoolStats {
	var out []metrics.PoolStats
	for _, name := range []string{"replay", "nested"} {
		p := r.pools[name]
		if p == nil {
			continue
		}
		st := p.Stats()
		out = append(out, metrics.PoolStats{Pool: name, Idle: st.Idle, Busy: st.Busy, Live: st.Live,
			Started: st.Started, Crashed: st.Crashed, Killed: st.Killed})
	}
	return out
}

// loadCatalogue replaces the stored catalogue with the --tools file's,
// audited with the actor "procgraph serve --tools"; an unchanged one is
// left alone (no audit record on every restart).
func loadCatalogue(ctx context.Context, svc *procedures.Service, cat *procedures.Catalogue) error {
	stored, err := svc.Catalogue(ctx)
	if err != nil {
		return err
	}
	if stored.Revision == cat.Revision {
		return nil
	}
	_, err = svc.PutCatalogue(ctx, cat.Tools, "procgraph serve --tools")
	return err
}

// printServeUsage prints serve's settings with their twins and defaults.
func printServeUsage(w io.Writer) {
	fmt.Fprint(w, "usage: procgraph serve [flags]\n\nRuns the HTTP API and MCP (/mcp, /mcp/interactive) on one address.\nEach flag has an environment twin; a flag wins over its twin.\n\n")
	var c serveConfig
	printFlags(w, c.serveFlags(newFlagSet("serve")).fs)
	fmt.Fprint(w, "\nNeo4j (environment only): NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD, NEO4J_DATABASE\n")
}

// upstreamDialTimeout bounds the start-up reachability check of
// --upstream-http.
const upstreamDialTimeout = 2 * time.Second

// warnUnreachable logs a warning naming --upstream-http when nothing
// accepts connections at its host and port. It warns rather than refuses:
// the HTTP upstream is one stateless POST per tool call with no session to
// set up (unlike --upstream-mcp, which must open one and so refuses), a
// tool server may start after procgraph, and while it is down every replay
// that calls a tool fails closed as tool_failed. A malformed URL is refused
// when the settings are parsed.
func warnUnreachable(ctx context.Context, rawURL string, log zerolog.Logger) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	if err := dialURL(ctx, rawURL); err != nil {
		log.Warn().Str("setting", "--upstream-http / PROCGRAPH_UPSTREAM_HTTP").Str("upstream", u.Scheme+"://"+u.Host).Err(err).
			Msg("the upstream tool server is unreachable: serving anyway; replays that call a tool fail with upstream_unavailable until it answers")
	}
}

// admissionStats is the replay admission queue for /metrics.
func admissionStats(a *sandbox.Admission) func() metrics.AdmissionStats {
	return func() metrics.AdmissionStats {
		st := a.Stats()
		return metrics.AdmissionStats{Running: st.Running, Waiting: st.Waiting, Admitted: st.Admitted, Refused: st.Refused}
	}
}

// budgetStats is the in-flight budget of tool-call bytes for /metrics.
func budgetStats(b *sandbox.Budget) func() metrics.BudgetStats {
	return func() metrics.BudgetStats {
		st := b.Stats()
		return metrics.BudgetStats{InUse: st.InUse, Refused: st.Refused}
	}
}

// sessionStats is the MCP sessions for /metrics.
func sessionStats(l *mcpserve.SessionLimits) func() metrics.SessionStats {
	return func() metrics.SessionStats {
		st := l.Stats()
		return metrics.SessionStats{Open: int64(st.Open), Refused: st.Refused}
	}
}

// searchIndexer is a store whose search index is applied after its commits
// (the embedded store).
type searchIndexer interface {
	SearchIndexState() (pending uint64, failed bool)
}

// searchIndexStats is the store's search indexer for /metrics.
func searchIndexStats(ix searchIndexer) func() metrics.SearchIndexStats {
	return func() metrics.SearchIndexStats {
		pending, failed := ix.SearchIndexState()
		return metrics.SearchIndexStats{Pending: int64(pending), Failed: failed}
	}
}

// A replay routes each upstream call by its run's catalogue.
var _ replay.CatalogueDispatcher = (*mcpdispatch.Gateway)(nil)
