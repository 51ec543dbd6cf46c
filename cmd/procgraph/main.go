// Command procgraph is the procedure knowledge service for LLM agents: it
// captures procedures, keeps them in a graph, hands planners the best ones as
// proc__ tools and replays them in a sandbox. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/procgraph/procgraph/sandbox"
)

func main() {
	if sandbox.IsWorker() {
		os.Exit(sandbox.RunWorker())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
