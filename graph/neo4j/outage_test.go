package neo4j

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

var outageTiming = flag.Bool("neo4j.outage-timing", false,
	"TestOutage also measures every call while Neo4j is down and fails one that takes 2 s or more")

// cutProxy forwards the TCP connections made to its own port to the test
// Neo4j. cut closes its listener and every connection through it: to a
// client, the database is gone (connections reset, new ones refused), as
// when its server stops; mend listens again on the same port, as a
// restarted server does. (A dedicated server stopped and started again
// cost the suite two JVM starts and a cold planner, about a minute of the
// machine's CPU.)
type cutProxy struct {
	target, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

// newCutProxy starts a proxy to the test Neo4j (skipping as settings does
// without one), cut for good at the end of the test.
func newCutProxy(t *testing.T) (*cutProxy, Config) {
	t.Helper()
	cfg := settings(t)
	u, err := url.Parse(cfg.URI)
	if err != nil || u.Host == "" {
		t.Fatalf("NEO4J_URI %q: %v", cfg.URI, err)
	}
	p := &cutProxy{target: u.Host, addr: "127.0.0.1:0", conns: map[net.Conn]bool{}}
	p.mend(t)
	t.Cleanup(p.cut)
	cfg.URI = "bolt://" + p.addr
	return p, cfg
}

// mend listens on the proxy's address (its first call picks the port).
func (p *cutProxy) mend(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the proxy cannot listen on %s again: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

// forward copies c to a new connection to the target and back until either
// side ends or the proxy is cut.
func (p *cutProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut while dialling
		p.mu.Unlock()
		_, _ = c.Close(), up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
	_, _ = c.Close(), up.Close()
}

// cut closes the listener and every connection through the proxy.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// TestOutage cuts the database away from a running store and HTTP API
// (cutProxy): calls answer unavailable (503) and, once the breaker is open,
// without reaching the driver; once it is back on the same address the
// store answers again by itself. With -neo4j.outage-timing every call while down is timed (aim: < 2 s).
func TestOutage(t *testing.T) {
	freshStore(t) // an empty database, the schema applied
	proxy, cfg := newCutProxy(t)
	ctx := context.Background()
	s, err := Open(ctx, cfg)
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

	proxy.cut()

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
			_, err := s.SetGrant(ctx, in.Name, nil, "h1", nil, storetest.Decision(audit.KindRevoke, in.Name, "h1", storetest.Base))
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

	proxy.mend(t)

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
		// A connection the cut reset may still sit in the driver's pool:
		// unavailable until the driver has replaced it.
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
