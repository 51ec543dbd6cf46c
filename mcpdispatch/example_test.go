package mcpdispatch_test

import (
	"context"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/replay"
)

// upstream is the wiring of serve's --upstream-mcp and
// --upstream-mcp-command (at most one of them, and not with
// --upstream-http): a replay.Dispatcher and its Close.
func upstream(ctx context.Context, url, command string, log zerolog.Logger) (replay.Dispatcher, func() error, error) {
	opts := mcpdispatch.Options{Logger: log}
	switch {
	case url != "":
		d, err := mcpdispatch.NewHTTP(ctx, url, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("--upstream-mcp / PROCGRAPH_UPSTREAM_MCP: %v", err)
		}
		return d, d.Close, nil
	case command != "":
		argv, err := mcpdispatch.SplitCommand(command)
		if err != nil {
			return nil, nil, fmt.Errorf("--upstream-mcp-command / PROCGRAPH_UPSTREAM_MCP_COMMAND: %v", err)
		}
		d, err := mcpdispatch.NewCommand(ctx, argv, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("--upstream-mcp-command / PROCGRAPH_UPSTREAM_MCP_COMMAND: %v", err)
		}
		return d, d.Close, nil
	}
	return nil, nil, nil
}

// Example_serve wires an upstream MCP server for serve.
func Example_serve() {
	_, _, _ = upstream, context.Background, zerolog.Nop
}

// ExampleImportCatalogueJSON is `procgraph tools import --from-mcp URL
// [--trust-annotations]`: the catalogue on stdout, skipped tools on stderr.
func ExampleImportCatalogueJSON() {
	src := mcpdispatch.Source{URL: "http://127.0.0.1:9000/mcp"}
	// or: argv, err := mcpdispatch.SplitCommand(fromMCPCommand); src := mcpdispatch.Source{Command: argv}
	if false { // needs a running MCP server
		if err := mcpdispatch.ImportCatalogueJSON(context.Background(), os.Stdout, os.Stderr, src, false); err != nil {
			fmt.Fprintln(os.Stderr, "procgraph tools import:", err)
			os.Exit(1)
		}
	}
}
