package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

var timeFormatOnce sync.Once

// shutdownGrace bounds how long in-flight requests may drain on SIGTERM.
const shutdownGrace = 30 * time.Second

// cmdServe runs the HTTP service until ctx ends, then drains in-flight
// requests and closes the sandbox pool and the store.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, err := parseServeConfig(args, getenv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "procgraph serve: %v\n", err)
		return 2
	}
	log := newLogger(stderr, cfg.LogLevel)
	if err := serve(ctx, cfg, log); err != nil {
		log.Error().Err(err).Msg("procgraph serve stopped")
		fmt.Fprintf(stderr, "procgraph serve: %v\n", err)
		return 1
	}
	return 0
}

func newLogger(w io.Writer, level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	// A package-wide setting: written once, so that servers started
	// concurrently in one process (tests) do not race on it.
	timeFormatOnce.Do(func() { zerolog.TimeFieldFormat = time.RFC3339Nano })
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

func serve(ctx context.Context, cfg *serveConfig, log zerolog.Logger) error {
	var tokens *api.TokensFile
	if cfg.TokensFile != "" {
		t, err := api.ReadTokensFile(cfg.TokensFile)
		if err != nil {
			return fmt.Errorf("--tokens-file / PROCGRAPH_TOKENS_FILE: %v", err)
		}
		tokens = t
	}
	auth := api.NewAuthenticator(tokens)
	if !auth.Enabled() && !isLoopback(cfg.Addr) {
		return fmt.Errorf("--addr %s is not a loopback address and no tokens are configured: refusing to serve without auth (set --tokens-file)", cfg.Addr)
	}
	var cat *procedures.Catalogue
	if cfg.ToolsFile != "" {
		c, err := loadCatalogueFile(cfg.ToolsFile)
		if err != nil {
			return fmt.Errorf("--tools / PROCGRAPH_TOOLS: %v", err)
		}
		cat = c
	}
	dispatcher, err := newDispatcher(cfg)
	if err != nil {
		return err
	}

	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.Error().Err(err).Msg("closing the store")
		}
	}()
	svc := procedures.NewService(store, procedures.Options{AllowMutatingAutorun: cfg.AllowMutatingAutorun})
	if cat != nil {
		if err := store.PutCatalogue(ctx, cat); err != nil {
			return fmt.Errorf("loading the catalogue: %v", procedures.ErrorMessage(err))
		}
		log.Info().Int("tools", len(cat.Tools)).Str("revision", cat.Revision).Msg("catalogue loaded")
	}

	runner, metricsOf, err := newRunner(cfg, log)
	if err != nil {
		return err
	}
	defer runner.Close()

	metrics := api.NewMetrics()
	if metricsOf != nil {
		metrics.AddGauges(metricsOf)
	}
	rp := replay.New(svc, runner, dispatcher, replay.Options{Logger: log})
	srv, err := api.New(api.Config{Service: svc, Replayer: rp, Auth: auth, Metrics: metrics, Logger: log})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %v", cfg.Addr, err)
	}
	httpServer := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	log.Info().Str("addr", "http://"+ln.Addr().String()).Str("store", cfg.Store).Bool("auth", auth.Enabled()).
		Bool("allow_mutating_autorun", cfg.AllowMutatingAutorun).Msg("listening")

	errc := make(chan error, 1)
	go func() { errc <- httpServer.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down: draining in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := httpServer.Shutdown(sctx); err != nil {
		log.Error().Err(err).Msg("drain incomplete")
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info().Msg("stopped")
	return nil
}

// newDispatcher returns where replayed tool calls go.
func newDispatcher(cfg *serveConfig) (replay.Dispatcher, error) {
	if cfg.UpstreamHTTP == "" {
		return replay.DispatcherFunc(func(ctx context.Context, tool string, args map[string]any) (any, error) {
			return nil, fmt.Errorf("no upstream is configured (set --upstream-http)")
		}), nil
	}
	d, err := replay.NewHTTPDispatcher(cfg.UpstreamHTTP, replay.HTTPOptions{})
	if err != nil {
		return nil, fmt.Errorf("--upstream-http / PROCGRAPH_UPSTREAM_HTTP: %v", err)
	}
	return d, nil
}

// newRunner returns the sandbox: worker processes by default.
func newRunner(cfg *serveConfig, log zerolog.Logger) (sandbox.Runner, func() []api.GaugeValue, error) {
	if cfg.InProcessSandbox {
		log.Warn().Msg("replays run in the server process: no memory limit (tests and benchmarks only)")
		return sandbox.NewInProcess(), nil, nil
	}
	pool, err := sandbox.NewPool(sandbox.PoolConfig{Size: cfg.SandboxWorkers, Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("starting sandbox workers: %v", err)
	}
	gauges := func() []api.GaugeValue {
		st := pool.Stats()
		return []api.GaugeValue{
			api.Gauge("procgraph_sandbox_workers_idle", "Idle sandbox workers.", float64(st.Idle)),
			api.Gauge("procgraph_sandbox_workers_busy", "Busy sandbox workers.", float64(st.Busy)),
			api.Gauge("procgraph_sandbox_workers_started", "Sandbox workers started since start.", float64(st.Started)),
			api.Gauge("procgraph_sandbox_workers_crashed", "Sandbox workers that crashed or were killed.", float64(st.Crashed)),
		}
	}
	return pool, gauges, nil
}
