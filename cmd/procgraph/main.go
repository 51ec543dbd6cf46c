// Command procgraph is the procedure knowledge service for LLM agents.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
