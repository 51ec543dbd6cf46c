package mcpserve_test

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/mcpserve"
	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// Example shows the wiring in `procgraph serve`: one handler per phase,
// mounted next to the HTTP API, refreshed by the API's change hooks and
// periodically.
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
	var auto, inter *mcpserve.Handler
	changed := func() { auto.Changed(); inter.Changed() }
	cfg := func(phase procedures.Phase) mcpserve.Config {
		return mcpserve.Config{Service: svc, Replayer: rp, Phase: phase, Auth: authn, Logger: log, OnChange: changed}
	}
	auto, err := mcpserve.New(cfg(procedures.PhaseAutomatic))
	if err != nil {
		panic(err)
	}
	inter, err = mcpserve.New(cfg(procedures.PhaseInteractive))
	if err != nil {
		panic(err)
	}
	go auto.Run(ctx, 5*time.Second)
	go inter.Run(ctx, 5*time.Second)
	srv, err := api.New(api.Config{Service: svc, Replayer: rp, Auth: authn, Metrics: metrics, Logger: log, OnCatalogueChange: changed})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", auto)
	mux.Handle("/mcp/interactive", inter)
	mux.Handle("/", srv)
	_ = &http.Server{Handler: mux}
}
