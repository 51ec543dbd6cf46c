package main

import (
	"context"
	"fmt"
	"io"
)

// Main runs procgraph with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: procgraph serve | signature | run")
		return 2
	}
	switch args[0] {
	case "serve":
		fmt.Fprintln(stderr, "procgraph serve: not yet (the HTTP server lands with issue 4)")
		return 1
	default:
		fmt.Fprintf(stderr, "procgraph: unknown command %q\n", args[0])
		return 2
	}
}
