package neo4j

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// boltProxy forwards Bolt connections to a Neo4j server and counts the
// round trips made through it: a client's burst of bytes sent after the
// server last spoke (or first) is one round trip.
type boltProxy struct {
	ln         net.Listener
	target     string
	mu         sync.Mutex
	serverLast bool
	trips      int
}

func newBoltProxy(t *testing.T, target string) *boltProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &boltProxy{ln: ln, target: target, serverLast: true}
	t.Cleanup(func() { _ = ln.Close() })
	go p.serve()
	return p
}

func (p *boltProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		go p.copy(s, c, false)
		go p.copy(c, s, true)
	}
}

// copy copies from src to dst, noting who spoke (fromServer) before each
// write onward.
func (p *boltProxy) copy(dst, src net.Conn, fromServer bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if !fromServer && p.serverLast {
				p.trips++
			}
			p.serverLast = fromServer
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// take returns the round trips counted since the last take.
func (p *boltProxy) take() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.trips
	p.trips, p.serverLast = 0, true
	return n
}

// TestStatementRoundTrips: a store call of one statement (query) is two
// round trips to the server, BEGIN sent with the statement and its pull,
// then COMMIT: a grant and a revoke of a procedure the service knows, a
// read of the catalogue, a ping. A run's record of one statement, which
// must roll back on a conflict its records show, is two as well
// (queryChecked), not three (ExecuteWrite waits for BEGIN's answer before
// it sends the statement): an invoke is four (ADR 0056). Counted by a
// proxy on the store's connection to the real Neo4j.
func TestStatementRoundTrips(t *testing.T) {
	freshStore(t) // the schema, an empty database
	cfg := settings(t)
	u, err := url.Parse(cfg.URI)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newBoltProxy(t, u.Host)
	cfg.URI = u.Scheme + "://" + proxy.ln.Addr().String()
	s, err := connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, replaytest.DefaultTools, "tester"); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: replaytest.ReadOnlyCode, Status: procedures.StatusSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	name := out.Procedure.Name
	rp := replay.New(svc, sandbox.NewInProcess(), &replaytest.Recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	invoke := func() error {
		res, err := rp.Invoke(ctx, replay.InvokeRequest{Name: name, Arguments: map[string]any{"task_id": 7}, Phase: audit.PhaseAutomatic, SessionID: "s"})
		if err == nil && res.Status != replay.StatusSucceeded {
			err = fmt.Errorf("invoke: %+v", res)
		}
		return err
	}
	grant := func(enabled bool) func() error {
		return func() error {
			_, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: name, Enabled: enabled, Actor: "tester"})
			return err
		}
	}
	// Warm: the pool holds a connection, the service knows the procedure.
	for _, f := range []func() error{grant(true), grant(false), invoke} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		what  string
		run   func() error
		trips int
	}{
		{"grant", grant(true), 2},
		{"revoke", grant(false), 2},
		{"catalogue", func() error { _, err := s.Catalogue(ctx); return err }, 2},
		{"ping", func() error { return s.Ping(ctx) }, 2},
		// procedure_catalogue, two; run_use, two: BEGIN sent with it,
		// COMMIT once its records show no conflict.
		{"invoke", invoke, 4},
	} {
		proxy.take()
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if n := proxy.take(); n != c.trips {
			t.Errorf("%s: %d round trips to Neo4j, want %d", c.what, n, c.trips)
		}
	}
}
