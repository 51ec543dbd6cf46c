// Package testcontainers gives tests a real Neo4j 5.26 LTS to talk to.
//
// Neo4j(tb) looks, in order, for:
//
//  1. NEO4J_URI (with NEO4J_USERNAME, NEO4J_PASSWORD, NEO4J_DATABASE): used as
//     is. This is what CI does: .ci/run starts the embedded server in
//     testcontainers/neo4j-server (built from Maven Central, no Docker) and
//     exports these variables. Locally:
//
//     eval "$(bash testcontainers/neo4j-server/start)"
//     go test ./...
//     bash testcontainers/neo4j-server/stop
//
//  2. A Docker engine that answers (DOCKER_HOST or /var/run/docker.sock):
//     a neo4j:5.26-community container started through testcontainers-go,
//     once per test binary. testcontainers-go is heavy, so it lives in the
//     separate module testcontainers/docker, compiled (with `go run`) only
//     when this path is taken; the main module does not depend on it.
//     PROCGRAPH_NEO4J_DOCKER=0 turns this path off.
//
//  3. Otherwise the test is skipped with a message saying how to get one —
//     except under CI=true, where it fails: CI must never report ok with the
//     Neo4j suite skipped.
package testcontainers

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Settings says how to reach a Neo4j server over Bolt.
type Settings struct {
	URI      string // bolt://host:port or neo4j://host:port
	Username string // empty means no authentication
	Password string
	Database string // empty means the server's default database
}

// SkipMessage is what Neo4j(tb) skips with when no Neo4j is available.
const SkipMessage = "no Neo4j: run `eval \"$(bash testcontainers/neo4j-server/start)\"` " +
	"from the repository root or set NEO4J_URI (and NEO4J_USERNAME, NEO4J_PASSWORD)"

// Neo4j returns the settings of a Neo4j server for tb, or skips tb when none
// is available (see the package doc for where it looks). It fails tb if a
// Docker engine answers but the container cannot be started, and instead of
// skipping when CI is "true".
func Neo4j(tb testing.TB) Settings {
	tb.Helper()
	if s, ok := FromEnv(); ok {
		consultServerStamp()
		return s
	}
	if os.Getenv("PROCGRAPH_NEO4J_DOCKER") != "0" && dockerAnswers() {
		s, err := dockerNeo4j()
		if err != nil {
			tb.Fatalf("testcontainers: Docker engine answers but Neo4j container failed: %v", err)
		}
		return s
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("testcontainers: CI=true and %s", SkipMessage)
	}
	tb.Skip(SkipMessage)
	return Settings{}
}

// consultServerStamp reads neo4j-server/.run/ready, which the embedded server
// rewrites (with its pid and start time) on every start. The go command keys
// its test result cache on the files a test opens, so a result obtained
// against an earlier server is not replayed as "(cached)" for a new one.
func consultServerStamp() {
	if _, file, _, ok := runtime.Caller(0); ok {
		_, _ = os.ReadFile(filepath.Join(filepath.Dir(file), "neo4j-server", ".run", "ready"))
	}
}

// FromEnv reads NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD and NEO4J_DATABASE;
// ok is false when NEO4J_URI is unset or empty.
func FromEnv() (s Settings, ok bool) {
	s = Settings{
		URI:      os.Getenv("NEO4J_URI"),
		Username: os.Getenv("NEO4J_USERNAME"),
		Password: os.Getenv("NEO4J_PASSWORD"),
		Database: os.Getenv("NEO4J_DATABASE"),
	}
	return s, s.URI != ""
}

// MustDriver opens a driver for s, checks that the server answers (failing tb
// if not) and closes the driver when tb's test ends.
func MustDriver(tb testing.TB, s Settings) neo4j.DriverWithContext {
	tb.Helper()
	auth := neo4j.NoAuth()
	if s.Username != "" {
		auth = neo4j.BasicAuth(s.Username, s.Password, "")
	}
	driver, err := neo4j.NewDriverWithContext(s.URI, auth)
	if err != nil {
		tb.Fatalf("testcontainers: neo4j driver for %s: %v", s.URI, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := driver.VerifyConnectivity(ctx); err != nil {
		_ = driver.Close(context.Background())
		tb.Fatalf("testcontainers: neo4j at %s does not answer: %v", s.URI, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = driver.Close(ctx)
	})
	return driver
}

// dockerAnswers reports whether a Docker engine answers GET /_ping within a
// couple of seconds, on DOCKER_HOST (unix:// or tcp://) or the default socket.
// It uses only the standard library, so the main module needs no Docker client.
func dockerAnswers() bool {
	network, address := "unix", "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		u, err := url.Parse(h)
		if err != nil {
			return false
		}
		switch u.Scheme {
		case "unix":
			address = u.Path
		case "tcp":
			network, address = "tcp", u.Host
		default:
			return false // ssh:// and others: leave them to an explicit NEO4J_URI
		}
	}
	client := &http.Client{
		Timeout: 3 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, address)
			},
		},
	}
	resp, err := client.Get("http://docker/_ping")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	return resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "OK"
}

var docker struct {
	once  sync.Once
	s     Settings
	err   error
	stdin io.WriteCloser // the child's stdin: never closed, so it closes at process exit
}

// dockerNeo4j starts the container once per test binary by running the
// testcontainers/docker module. The child holds the container until its stdin
// closes, which happens when this process exits, however it exits; Ryuk, the
// testcontainers reaper, is the second line of defence.
func dockerNeo4j() (Settings, error) {
	docker.once.Do(func() { docker.s, docker.err = startDockerNeo4j() })
	return docker.s, docker.err
}

func startDockerNeo4j() (Settings, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return Settings{}, fmt.Errorf("cannot locate the testcontainers/docker module")
	}
	dir := filepath.Join(filepath.Dir(file), "docker")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return Settings{}, fmt.Errorf("testcontainers/docker module not found: %w", err)
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe() // kept open for the life of this process
	if err != nil {
		return Settings{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Settings{}, err
	}
	if err := cmd.Start(); err != nil {
		return Settings{}, err
	}
	docker.stdin = stdin

	type result struct {
		s   Settings
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var s Settings
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
			if !ok {
				continue
			}
			switch k {
			case "NEO4J_URI":
				s.URI = v
			case "NEO4J_USERNAME":
				s.Username = v
			case "NEO4J_PASSWORD":
				s.Password = v
			}
			if s.URI != "" && s.Username != "" && s.Password != "" {
				ch <- result{s: s}
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
		ch <- result{err: fmt.Errorf("testcontainers/docker exited early: %w\n%s", cmd.Wait(), stderr.String())}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-time.After(6 * time.Minute):
		_ = cmd.Process.Kill()
		return Settings{}, fmt.Errorf("timed out waiting for the Neo4j container\n%s", stderr.String())
	}
}
