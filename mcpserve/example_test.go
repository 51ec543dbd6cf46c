package mcpserve_test

import (
	"context"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/mcpserve"
	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// Example shows the wiring in `procgraph serve`: one handler per phase,
// mounted next to the HTTP API, following the service's change feed.
func Example() {
	var (
		ctx     context.Context
		svc     *procedures.Service
		rp      *replay.Replayer
		authn   *auth.Authenticator
		metrics *metrics.Registry
		log     zerolog.Logger
	)
	if ctx == nil {
		return // a sketch: the values come from serve
	}
	// The two endpoints share their sessions' caps and their read of the
	// exposed procedures.
	sessions, exposed := mcpserve.NewSessionLimits(0, 0), mcpserve.NewExposed()
	cfg := func(phase audit.Phase) mcpserve.Config {
		return mcpserve.Config{Service: svc, Replayer: rp, Phase: phase, Auth: authn, Logger: log, Sessions: sessions, Exposed: exposed}
	}
	auto, err := mcpserve.New(cfg(audit.PhaseAutomatic))
	if err != nil {
		panic(err)
	}
	inter, err := mcpserve.New(cfg(audit.PhaseInteractive))
	if err != nil {
		panic(err)
	}
	// Both follow the service's change feed; WatchRemote adds what other
	// instances change.
	go auto.Run(ctx)
	go inter.Run(ctx)
	go svc.WatchRemote(ctx, procedures.DefaultWatchInterval)
	srv, err := api.New(api.Config{Service: svc, Replayer: rp, Auth: authn, Metrics: metrics, Logger: log})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", auto)
	mux.Handle("/mcp/interactive", inter)
	mux.Handle("/", srv)
	_ = &http.Server{Handler: mux}
}
