package neo4jstore

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	execpkg "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

var outageTiming = flag.Bool("neo4j.outage-timing", false,
	"TestOutage also measures every call while Neo4j is down and fails one that takes 2 s or more")

// ownServer is a Neo4j server of this test alone (testcontainers/neo4j-server
// with its own state directory and port), so that it can be stopped.
type ownServer struct {
	script string // testcontainers/neo4j-server
	env    []string
	uri    string
}

// startOwnServer starts a dedicated Neo4j, stopped at the end of the test.
// It skips without NEO4J_URI (store tests are off), Java, or a built
// launcher (testcontainers/neo4j-server/start builds it).
func startOwnServer(t *testing.T) *ownServer {
	t.Helper()
	if os.Getenv("NEO4J_URI") == "" {
		t.Skip("NEO4J_URI is not set: store tests against Neo4j are off")
	}
	script, err := filepath.Abs("../../testcontainers/neo4j-server")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := execpkg.LookPath("java"); err != nil {
		t.Skip("no java: cannot run a dedicated Neo4j")
	}
	if m, _ := filepath.Glob(filepath.Join(script, "target/dependency/neo4j-kernel-*.jar")); len(m) == 0 {
		t.Skip("the Neo4j launcher is not built (run testcontainers/neo4j-server/start once)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	srv := &ownServer{
		script: script,
		env: append(os.Environ(), "NEO4J_RUN_DIR="+t.TempDir(), fmt.Sprintf("NEO4J_BOLT_PORT=%d", port),
			"NEO4J_PAGECACHE_MB=32", "NEO4J_SERVER_JAVA_OPTS=-Xms64m -Xmx384m -XX:TieredStopAtLevel=1"),
		uri: fmt.Sprintf("bolt://127.0.0.1:%d", port),
	}
	t.Cleanup(func() { srv.run(t, "stop") })
	srv.run(t, "start")
	return srv
}

// run runs the server script name (start or stop). A start is tried a few
// times: right after a stop the port may still be held (sockets closing).
func (s *ownServer) run(t *testing.T, name string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		cmd := execpkg.Command("bash", filepath.Join(s.script, name))
		cmd.Env = s.env
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		if name != "start" || attempt == 5 {
			t.Fatalf("neo4j-server/%s: %v\n%s", name, err, out)
		}
		t.Logf("neo4j-server/start failed (attempt %d), retrying: %v", attempt, err)
		time.Sleep(3 * time.Second)
	}
}

// TestOutage stops the database under a running store and HTTP API: calls
// answer unavailable (503) and, once the breaker is open, without reaching
// the driver; after a restart on the same address the store answers again by
// itself. With -neo4j.outage-timing every call while down is timed (aim: < 2 s).
func TestOutage(t *testing.T) {
	srv := startOwnServer(t)
	ctx := context.Background()
	s, err := Open(ctx, Config{URI: srv.uri, Username: "neo4j", Password: "procgraph-test"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var seen []string
	hs := serviceOver(t, s, &seen)
	in := storetest.In([]string{"outage_a", "outage_b"}, "h1", "k1", storetest.Base)
	storetest.MustCapture(t, s, in)
	if s.breaker.IsOpen() {
		t.Fatal("the breaker is open while the database is up")
	}

	srv.run(t, "stop")

	// The first call finds the database gone: unavailable, breaker open.
	start := time.Now()
	_, err = s.Get(ctx, in.Name)
	if *outageTiming {
		t.Logf("first call after the stop: %v", time.Since(start))
		if took := time.Since(start); took >= 2*time.Second {
			t.Errorf("the first call after the stop took %v, aim < 2 s", took)
		}
	}
	storetest.RequireCode(t, err, fault.CodeUnavailable)
	if !s.breaker.IsOpen() {
		t.Fatalf("the breaker is closed after an outage error: %v", err)
	}
	// Every later call is answered by the breaker, not the driver.
	calls := []struct {
		name string
		call func() error
	}{
		{"ping", func() error { return s.Ping(ctx) }},
		{"get", func() error { _, err := s.Get(ctx, in.Name); return err }},
		{"find", func() error { _, _, err := s.Find(ctx, procedures.Query{Limit: 5}); return err }},
		{"capture", func() error { _, err := s.Capture(ctx, in); return err }},
		{"grant", func() error {
			_, err := s.SetGrant(ctx, in.Name, nil, "h1", storetest.Decision(procedures.KindRevoke, in.Name, "h1", storetest.Base))
			return err
		}},
		{"catalogue", func() error { _, err := s.Catalogue(ctx); return err }},
	}
	for _, c := range calls {
		start := time.Now()
		err := c.call()
		took := time.Since(start)
		storetest.RequireCode(t, err, fault.CodeUnavailable)
		if !errors.Is(err, errDown) {
			t.Errorf("%s: %v, want the breaker's answer", c.name, err)
		}
		if *outageTiming {
			t.Logf("%s while down: %v", c.name, took)
			if took >= 2*time.Second {
				t.Errorf("%s took %v while down, aim < 2 s", c.name, took)
			}
		}
	}
	for _, path := range []string{"/v1/procedures", "/v1/procedures/" + in.Name, "/readyz"} {
		start := time.Now()
		code, body := call(t, hs, "GET", path, nil)
		took := time.Since(start)
		if code != 503 {
			t.Errorf("GET %s while down: %d %v, want 503", path, code, body)
		}
		if e, _ := body["error"].(map[string]any); path != "/readyz" && (e == nil || e["code"] != "unavailable") {
			t.Errorf("GET %s while down: %v, want error code unavailable", path, body)
		}
		if *outageTiming {
			t.Logf("GET %s while down: %v", path, took)
			if took >= 2*time.Second {
				t.Errorf("GET %s took %v while down, aim < 2 s", path, took)
			}
		}
	}

	srv.run(t, "start")

	// The breaker's prober finds the database back; nothing restarts the store.
	deadline := time.Now().Add(2 * time.Minute)
	for s.breaker.IsOpen() {
		if time.Now().After(deadline) {
			t.Fatal("the breaker is still open two minutes after the database came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var res procedures.CaptureResult
	for {
		// A database that answers Bolt may still be starting its default
		// database: unavailable until it is.
		res, err = s.Capture(ctx, in)
		if fault.ErrorCode(err) != fault.CodeUnavailable || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Capture after the restart: %v", err)
	}
	if res.Procedure == nil || res.Procedure.Name != in.Name {
		t.Fatalf("Capture after the restart: %+v", res)
	}
	if code, body := call(t, hs, "GET", "/v1/procedures/"+in.Name, nil); code != 200 {
		t.Fatalf("GET after the restart: %d %v", code, body)
	}
}

// TestDriverBounds checks that Open bounds connecting and taking a
// connection from the pool, and leaves retries to inTx (one attempt per
// driver call), so no call waits long on a database that is down.
func TestDriverBounds(t *testing.T) {
	s := openStore(t)
	c := s.driverConfig
	if c.ConnectionAcquisitionTimeout <= 0 || c.ConnectionAcquisitionTimeout > acquireTimeout {
		t.Errorf("ConnectionAcquisitionTimeout = %v, want (0, %v]", c.ConnectionAcquisitionTimeout, acquireTimeout)
	}
	if c.SocketConnectTimeout <= 0 || c.SocketConnectTimeout > connectTimeout {
		t.Errorf("SocketConnectTimeout = %v, want (0, %v]", c.SocketConnectTimeout, connectTimeout)
	}
	if c.MaxTransactionRetryTime != 0 {
		t.Errorf("MaxTransactionRetryTime = %v, want 0 (inTx retries)", c.MaxTransactionRetryTime)
	}
}
