// Command docker starts a Neo4j 5.26 LTS container through testcontainers-go
// and keeps it until its standard input closes (or it gets SIGINT/SIGTERM),
// then removes it.
//
// It is a separate module on purpose: testcontainers-go brings ~50 modules
// (the Docker client and friends) and ~30 s of cold compile on two cores, and
// the main module's `go build ./...` / `go test ./...` must not pay for that.
// The parent package (github.com/procgraph/procgraph/testcontainers) runs it
// with `go run .` from this directory only when NEO4J_URI is unset and a
// Docker engine answers.
//
// On stdout it prints exactly three lines, the same as
// testcontainers/neo4j-server/start:
//
//	export NEO4J_URI=bolt://HOST:PORT
//	export NEO4J_USERNAME=neo4j
//	export NEO4J_PASSWORD=...
//
// Everything else goes to stderr. NEO4J_IMAGE overrides the image
// (default neo4j:5.26-community).
//
// testcontainers-go's own neo4j module (modules/neo4j) is not used because the
// Go module proxy this project builds from does not serve it; the generic
// container API below does what that module does for this case.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	username = "neo4j"
	password = "procgraph-test"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testcontainers/docker:", err)
		os.Exit(1)
	}
}

func run() error {
	image := os.Getenv("NEO4J_IMAGE")
	if image == "" {
		image = "neo4j:5.26-community"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	c, err := testcontainers.Run(ctx, image,
		testcontainers.WithExposedPorts("7687/tcp"),
		testcontainers.WithEnv(map[string]string{
			"NEO4J_AUTH":                         username + "/" + password,
			"NEO4J_server_memory_pagecache_size": "256m",
			"NEO4J_server_memory_heap_max__size": "1g",
		}),
		testcontainers.WithWaitStrategy(
			wait.ForLog("Bolt enabled on").WithStartupTimeout(4*time.Minute),
			wait.ForListeningPort("7687/tcp").WithStartupTimeout(4*time.Minute),
		),
	)
	defer func() {
		if c != nil {
			if err := testcontainers.TerminateContainer(c); err != nil {
				fmt.Fprintln(os.Stderr, "testcontainers/docker: terminate:", err)
			}
		}
	}()
	if err != nil {
		return fmt.Errorf("start %s: %w", image, err)
	}
	uri, err := c.PortEndpoint(ctx, "7687/tcp", "bolt")
	if err != nil {
		return fmt.Errorf("bolt endpoint: %w", err)
	}
	fmt.Printf("export NEO4J_URI=%s\nexport NEO4J_USERNAME=%s\nexport NEO4J_PASSWORD=%s\n", uri, username, password)
	os.Stdout.Sync()

	// Hold the container until stdin closes (the parent test process exited or
	// closed the pipe) or a signal arrives.
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		close(done)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	return nil
}
