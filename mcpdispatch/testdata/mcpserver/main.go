// Command mcpserver is the mcptest tool server over stdio, for the stdio
// dispatcher tests. It appends every call it receives to the file named by
// MCPTEST_RECORD, if set, and writes MCPTEST_STDERR, if set, to its
// standard error as it starts.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/mcpdispatch/internal/mcptest"
)

func main() {
	if say := os.Getenv("MCPTEST_STDERR"); say != "" {
		fmt.Fprintln(os.Stderr, say)
	}
	rec := &mcptest.Recorder{File: os.Getenv("MCPTEST_RECORD")}
	if err := mcptest.NewServer(rec, true).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}
