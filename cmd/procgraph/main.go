// Command procgraph is the procedure knowledge service for LLM agents: it
// captures procedures, keeps them in a graph, hands planners the best ones as
// proc__ tools and replays them in a sandbox. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/buildinfo"
	"github.com/procgraph/procgraph/internal/telemetry"
	"github.com/procgraph/procgraph/mcpserve"
	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/tokens"
)

func main() {
	if sandbox.IsWorker() {
		os.Exit(sandbox.RunWorker())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := runCLI(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Main is one `procgraph serve`, as benbjohnson/wtf's cmd/wtfd: NewMain
// with a configuration, Open to start serving, URL to learn where, Close
// to drain and stop; Run does all three around a context.
type Main struct {
	Config *serveConfig
	Logger zerolog.Logger
	// Terminal is where serve speaks to the person who started it (how to
	// use the tokens, the auth-off warning), apart from the JSON log;
	// nil says nothing. A token is written to it only when
	// TerminalIsTTY: output that is not a terminal may be kept.
	Terminal      io.Writer
	TerminalIsTTY bool

	ln      net.Listener
	server  *http.Server
	served  chan error     // Serve's result
	cancel  func()         // ends what runs in the background
	closers []func() error // undone in reverse order by Close
	// draining is closed as Close's drain begins: the change streams end
	// then, and the drain waits only for requests that end by themselves.
	draining chan struct{}
	authn    *auth.Authenticator
	authOn   bool
	// tokensCreated: this start created the store's first tokens.
	tokensCreated bool
	// tokens manages the store's tokens (the API's token routes).
	tokens *tokens.Manager
	// proofKey is this start's proof key (proof.go): the server answers
	// challenges with it, and registers it with the operator credential.
	proofKey string
	close    sync.Once
	err      error
	// svc and gate are the service and turn gate being served (tests
	// reach the admission bounds they hold through them).
	svc  *procedures.Service
	gate *gate.Gate
}

// NewMain returns a Main for cfg that logs to log; nothing runs yet.
func NewMain(cfg *serveConfig, log zerolog.Logger) *Main {
	return &Main{Config: cfg, Logger: log}
}

// Open opens the store, the sandbox and the upstream, listens on
// Config.Addr and starts serving. On an error what was opened is closed
// again and nothing listens.
func (m *Main) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = m.Close()
		}
	}()
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	m.draining = make(chan struct{})
	handler, err := m.open(ctx, bg)
	if err != nil {
		return err
	}
	if m.proofKey, err = newProofKey(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %v", m.Config.Addr, err)
	}
	m.ln = ln
	m.server = &http.Server{
		Handler:           answerChallenges(m.proofKey, handler),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	m.server.RegisterOnShutdown(func() { close(m.draining) })
	m.served = make(chan error, 1)
	go func() { m.served <- m.server.Serve(ln) }()
	m.Logger.Info().Str("addr", m.URL()).Str("console", m.localURL()+"/ui/").Str("store", m.Config.Store).Bool("auth", m.authOn).
		Bool("allow_mutating_autorun", m.Config.AllowMutatingAutorun).Msg("listening")
	m.announceAuth()
	return nil
}

// URL is where Main serves (http://host:port, the port chosen when
// Config.Addr asked for 0); "" before Open.
func (m *Main) URL() string {
	if m.ln == nil {
		return ""
	}
	return "http://" + m.ln.Addr().String()
}

// Run opens Main, serves until ctx ends or serving fails, then closes it.
func (m *Main) Run(ctx context.Context) error {
	if err := m.Open(ctx); err != nil {
		return err
	}
	var err error
	select {
	case err = <-m.served:
		m.served <- err // for Close
	case <-ctx.Done():
		m.Logger.Info().Msg("shutting down: draining in-flight requests")
	}
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close drains in-flight requests (up to shutdownGrace), then closes the
// sandbox, the upstream and the store. It is safe to call more than once.
func (m *Main) Close() error {
	m.close.Do(func() {
		if m.server != nil {
			sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			if err := m.server.Shutdown(sctx); err != nil {
				m.Logger.Error().Err(err).Msg("drain incomplete")
			}
			cancel()
			if err := <-m.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.err = err
			}
		}
		if m.cancel != nil {
			m.cancel()
		}
		for i := len(m.closers) - 1; i >= 0; i-- {
			if err := m.closers[i](); err != nil && m.err == nil {
				m.err = err
			}
		}
		if m.server != nil {
			m.Logger.Info().Msg("stopped")
		}
	})
	return m.err
}

// onClose adds what Close undoes, in reverse order of adding.
func (m *Main) onClose(f func() error) { m.closers = append(m.closers, f) }

// open builds the handler: catalogue, upstream, store, auth, service,
// sandbox, replayer, API and MCP. Startup work is bounded by ctx; what runs
// until Close lives on bg.
func (m *Main) open(ctx, bg context.Context) (http.Handler, error) {
	cfg, log := m.Config, m.Logger
	// Traces, when the OTEL_* variables ask for them (internal/telemetry).
	stopTraces, err := telemetry.Setup(ctx, func(name string) string { return getenv(ctx, name) }, buildinfo.Version())
	if err != nil {
		return nil, fmt.Errorf("tracing: %v", err)
	}
	m.onClose(func() error {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := stopTraces(sctx); err != nil {
			log.Warn().Err(err).Msg("tracing: the last spans could not be exported")
		}
		return nil
	})
	m.keepHeapFloor(ctx)
	var cat *procedures.Catalogue
	if cfg.ToolsFile != "" {
		if cat, err = loadCatalogueFile(cfg.ToolsFile); err != nil {
			return nil, fmt.Errorf("--tools / PROCGRAPH_TOOLS: %v", err)
		}
	}
	dispatcher, gateway, refresher, closeDispatcher, err := newDispatcher(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	m.onClose(closeDispatcher)
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	m.onClose(store.Close)
	if err := refuseUnfinishedImport(ctx, store, cfg, "it is not served"); err != nil {
		return nil, err
	}
	// After the store opened: a data path that is not a store gets no
	// credential files beside it.
	tokenStore, ok := store.(tokens.Store)
	if !ok {
		return nil, fault.Errorf(fault.CodeInternal, "store %T keeps no tokens", store)
	}
	reg := metrics.New()
	m.tokens = tokens.NewManager(tokenStore, procedures.NewRecorder(store, procedures.RecorderOptions{Counter: reg}))
	authn, err := m.newAuthenticator(ctx, tokenStore)
	if err != nil {
		return nil, err
	}
	m.authn, m.authOn = authn, authn.Enabled()
	if m.authOn {
		flushed := make(chan struct{})
		go func() { defer close(flushed); flushUses(bg, authn, log) }()
		m.onClose(func() error { <-flushed; return nil }) // before the store closes (bg is cancelled first)
	}
	if cfg.AuditRetention > 0 {
		stopped := make(chan struct{})
		go func() { defer close(stopped); keepAudit(bg, store, cfg.AuditArchiveDir, cfg.AuditRetention, log) }()
		m.onClose(func() error { <-stopped; return nil }) // before the store closes (bg is cancelled first)
	}
	svc := procedures.NewService(store, procedures.Options{AllowMutatingAutorun: cfg.AllowMutatingAutorun, Counter: reg,
		MaxConcurrentSearches: cfg.MaxConcurrentSearches, DemoteAfter: cfg.DemoteAfter})
	m.onClose(func() error { svc.Changes().Close(); return nil })
	if cat != nil {
		if err := loadCatalogue(ctx, svc, cat); err != nil {
			return nil, fmt.Errorf("loading the catalogue: %v", fault.ErrorMessage(err))
		}
		log.Info().Int("tools", len(cat.Tools)).Str("revision", cat.Revision).Msg("catalogue loaded")
	}
	if refresher != nil {
		m.followServers(ctx, bg, refresher, svc)
	}
	if gateway != nil {
		gateway.Route(svc.Catalogue) // each call goes to its tool's server, by the current catalogue
		if stored, err := svc.Catalogue(ctx); err == nil {
			gateway.LogRoutes(stored, log)
		}
	}
	runners, err := newRunners(cfg, log)
	if err != nil {
		return nil, err
	}
	m.onClose(runners.close)
	if err := reg.AddPools(runners.stats); err != nil {
		return nil, err
	}
	admission := newAdmission(cfg, m.authOn)
	if err := errors.Join(reg.AddAdmission(admissionStats(admission)), reg.AddBudget(budgetStats(runners.budget))); err != nil {
		return nil, err
	}
	if !cfg.RecordResponses {
		n, err := svc.ForgetRecordings(ctx)
		if err != nil {
			return nil, err
		}
		log.Info().Int("deleted", n).Msg("--record-responses false: the stored recordings are deleted, and no run records")
	}
	if err := addUpstreamMetrics(reg, gateway); err != nil {
		return nil, err
	}
	rp := replay.New(svc, runners.outer, dispatcher, replay.Options{Logger: log, NestedRunner: runners.nested,
		Admission: admission, Limits: sandbox.Limits{Timeout: cfg.ReplayTimeout}, Counter: callCounter(reg, gateway),
		RecordResponses: cfg.RecordResponses, RecordingsPerVersion: cfg.RecordingsPerVersion})
	sessions := mcpserve.NewSessionLimits(cfg.MCPMaxSessions, cfg.MCPMaxSessionsPerToken)
	if err := reg.AddSessions(sessionStats(sessions)); err != nil {
		return nil, err
	}
	if ix, ok := store.(searchIndexer); ok {
		if err := reg.AddSearchIndex(searchIndexStats(ix)); err != nil {
			return nil, err
		}
	}
	turns, ok := store.(gate.TurnStore)
	if !ok {
		return nil, fault.Errorf(fault.CodeInternal, "store %T keeps no turns", store)
	}
	onTurn, err := m.newNotifier(reg)
	if err != nil {
		return nil, err
	}
	tg := gate.New(rp, turns, gate.Options{MaxPending: cfg.MaxPendingApprovals,
		MaxPendingPerRequester: cfg.MaxPendingPerRequester, MaxWaiters: cfg.MaxWaiters, ApprovalTimeout: cfg.ApprovalTimeout, ReviewDefault: gate.Review(cfg.ReviewDefault),
		RunGrace: cfg.runGrace, OnTurn: onTurn})
	m.svc, m.gate = svc, tg
	swept := make(chan struct{})
	go func() { defer close(swept); tg.Sweeper(bg, gate.DefaultSweepInterval) }()
	m.onClose(func() error { <-swept; return nil }) // before the store closes (bg is cancelled first)
	verified := make(chan struct{})
	go func() { defer close(verified); rp.WatchCatalogue(bg) }() // stale versions verified after each catalogue change
	m.onClose(func() error { <-verified; return nil })
	dumps, _ := store.(dump.Store)
	return newHandler(bg, svc, rp, tg, dumps, m.tokens, authn, reg, sessions, upstreamsOf(gateway), m.draining, log)
}

// newAuthenticator returns the authenticator of cfg (docs/design.md "Secure by
// default", "Tokens in the store"): none with --auth off (resolve has
// refused any address but loopback), else the store's tokens, after the
// tokens file in effect (given, or the default one when it exists) was
// imported into the store, and the first tokens were created when the
// store has never held one. What was read and created is logged (paths
// and holders, never a token).
func (m *Main) newAuthenticator(ctx context.Context, ts tokens.Store) (*auth.Authenticator, error) {
	cfg, log := m.Config, m.Logger
	if cfg.Auth == authOff {
		log.Warn().Str("setting", "--auth off / PROCGRAPH_AUTH=off").
			Msg("auth is off: every caller is anonymous with every scope (MCP offers no grant-scoped tool); loopback only")
		if cfg.Store == "embedded" {
			if unused, _, err := tokensFilePath("", cfg.Store, cfg.Data); err == nil {
				if _, err := os.Stat(unused); err == nil {
					log.Warn().Str("ignored", unused).Msg("auth is off: the tokens file next to the data file is not used")
				}
			}
		}
		return auth.NewAuthenticator(nil), nil
	}
	ev := log.Info()
	if file := cfg.TokensFile; file != "" {
		_, statErr := os.Stat(file)
		if !cfg.TokensDefault || statErr == nil {
			f, err := readServeTokensFile(file)
			if err != nil {
				return nil, fmt.Errorf("--tokens-file / PROCGRAPH_TOKENS_FILE: %v", err)
			}
			imp, err := m.tokens.Import(ctx, f, tokensFileActor)
			if err != nil {
				return nil, fmt.Errorf("importing the tokens file %s into the store: %s", file, fault.ErrorMessage(err))
			}
			ev = ev.Str("tokens_file", file).Strs("imported", imp.Added)
			if len(imp.Kept) > 0 {
				log.Warn().Str("tokens_file", file).Strs("holders", imp.Kept).
					Msg("auth: the store holds another token for these holders of the tokens file (rotated or revoked there): the store's is in effect")
			}
		}
	}
	first, err := m.tokens.First(ctx, firstHolders)
	if err != nil {
		return nil, fmt.Errorf("creating the first tokens in the store: %s", fault.ErrorMessage(err))
	}
	if first != nil {
		m.tokensCreated = true
		for holder, tok := range first {
			if err := writeSecretFile(credentialFile(m.credentialDir(), holder), []byte(tok+"\n")); err != nil {
				return nil, fmt.Errorf("keeping the %s token: %v", holder, err)
			}
		}
	}
	a, err := auth.NewStoreAuthenticator(ctx, ts, auth.StoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the tokens from the store: %s", fault.ErrorMessage(err))
	}
	ev.Bool("created", m.tokensCreated).Int("tokens", a.Tokens()).Msg("auth: the store's tokens in effect")
	if cfg.TokensDefault {
		m.warnIgnoredTokensFile()
	}
	return a, nil
}

// tokensFileActor is the actor of the audit records of a tokens file's
// import at start.
const tokensFileActor = "tokens-file"

// readServeTokensFile reads a tokens file serve imports: one that is
// given must list at least one token (auth.LoadTokensFile's rule: fail
// closed).
func readServeTokensFile(path string) (*auth.TokensFile, error) {
	f, err := auth.ReadTokensFile(path)
	if err == nil && len(f.Tokens) == 0 {
		_, err = auth.LoadTokensFile(path) // its refusal of an empty file
	}
	return f, err
}

// credentialDir is where the first start keeps the operator's and the
// agent's tokens (credentialFile): beside the tokens file in effect (the
// embedded data file's directory by default), else, on Neo4j without a
// tokens file, the working directory serve started in.
func (m *Main) credentialDir() string {
	if m.Config.TokensFile != "" {
		return filepath.Dir(m.Config.TokensFile)
	}
	if dir, err := os.Getwd(); err == nil {
		return dir
	}
	return "."
}

// flushUses writes the tokens' last uses every useFlushEvery until ctx
// ends, then once more.
func flushUses(ctx context.Context, a *auth.Authenticator, log zerolog.Logger) {
	t := time.NewTicker(useFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := a.FlushUses(fctx); err != nil {
				log.Warn().Err(err).Msg("auth: the tokens' last uses could not be written")
			}
			cancel()
			return
		case <-t.C:
			if err := a.FlushUses(ctx); err != nil {
				log.Warn().Err(err).Msg("auth: the tokens' last uses could not be written")
			}
		}
	}
}

// useFlushEvery is how often serve writes the tokens' last uses (each at
// most once every auth.UseWriteEvery).
const useFlushEvery = 10 * time.Second

// warnIgnoredTokensFile warns when the working directory holds a tokens
// file that is not the one in effect: serve once read ./procgraph-tokens.json,
// and its tokens no longer apply to a store elsewhere.
func (m *Main) warnIgnoredTokensFile() {
	cwd, err := filepath.Abs(defaultTokensFile)
	if err != nil || cwd == m.Config.TokensFile {
		return
	}
	if _, err := os.Stat(cwd); err == nil {
		m.Logger.Warn().Str("ignored", cwd).Str("tokens_file", m.Config.TokensFile).
			Msg("auth: a tokens file in the working directory is not used: the tokens file is the one next to the data file (or --tokens-file)")
	}
}
