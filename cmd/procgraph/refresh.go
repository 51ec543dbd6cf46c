package main

import (
	"context"

	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/procedures"
)

// followServers makes the catalogue follow what the --upstreams servers
// list (docs/design.md "Drift"): once now, before anything is served (after
// --tools, so the file's entries that are as listed follow their server and
// the ones it edits stay the operator's), then on each server's
// tools/list_changed, on each reconnection and every --catalogue-refresh,
// until Close. A server that does not answer now is refreshed when it
// connects.
func (m *Main) followServers(ctx, bg context.Context, ref *mcpdispatch.Refresher, svc *procedures.Service) {
	ref.RefreshAll(ctx, svc) // a server that fails is logged by the refresher, its entries kept
	stopped := make(chan struct{})
	go func() { defer close(stopped); ref.Run(bg, svc) }()
	m.onClose(func() error { <-stopped; return nil }) // bg is cancelled first
}
