package neo4jstore

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/procgraph/procgraph/fault"
)

// The bounds that keep a call short while the database is down (Open's
// driver configuration and the breaker).
const (
	// connectTimeout bounds one TCP connect to the server.
	connectTimeout = time.Second
	// acquireTimeout bounds taking a connection from the driver's pool,
	// connecting included.
	acquireTimeout = 2 * time.Second
	// probeInterval is how often the breaker probes a database known down.
	probeInterval = 250 * time.Millisecond
	// probeTimeout bounds one probe.
	probeTimeout = time.Second
)

// errDown answers every call while the breaker is open: the database was
// found unreachable and has not answered a probe since.
var errDown = &backendError{
	public: fault.Errorf(fault.CodeUnavailable, msgUnavailable),
	op:     "call",
	cause:  errors.New("the database is down (circuit open); probing it in the background"),
}

// breaker is the store's circuit breaker. Closed, calls go to the driver.
// When a call finds the database unreachable (outage), the breaker opens:
// calls then fail at once with errDown, without waiting on the driver, and
// one goroutine probes the server every probeInterval; the first probe that
// succeeds closes the breaker again. So procgraph answers quickly while
// Neo4j is down and recovers on its own once it is back.
type breaker struct {
	probe func(ctx context.Context) error // one connectivity check

	mu      sync.Mutex
	open    bool
	stop    chan struct{} // closed by shutdown: the prober exits
	stopped bool
	trips   int // times the breaker opened, for tests and logs
	onTrip  func(cause error)
	onClose func(down time.Duration)
	since   time.Time
}

func newBreaker(probe func(ctx context.Context) error) *breaker {
	return &breaker{probe: probe, stop: make(chan struct{})}
}

// allow returns errDown while the breaker is open, else nil.
func (b *breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		return errDown
	}
	return nil
}

// trip opens the breaker (when closed) and starts the prober.
func (b *breaker) trip(cause error) {
	b.mu.Lock()
	if b.open || b.stopped {
		b.mu.Unlock()
		return
	}
	b.open, b.since = true, time.Now()
	b.trips++
	onTrip := b.onTrip
	b.mu.Unlock()
	if onTrip != nil {
		onTrip(cause)
	}
	go b.run()
}

// run probes until a probe succeeds (closing the breaker) or shutdown.
func (b *breaker) run() {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		err := b.probe(ctx)
		cancel()
		if err != nil {
			continue
		}
		b.mu.Lock()
		b.open = false
		down := time.Since(b.since)
		onClose := b.onClose
		b.mu.Unlock()
		if onClose != nil {
			onClose(down)
		}
		return
	}
}

// shutdown stops the prober; the breaker stays as it is.
func (b *breaker) shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.stopped = true
		close(b.stop)
	}
}

// outage reports whether err says the database cannot be reached at all
// (no connection, connection lost, database unavailable), as opposed to a
// busy database (deadlocks, an exhausted pool) or a refused statement. The
// driver keeps the raw errors of its attempts (io.EOF, net errors) in a
// TransactionExecutionLimit; the last one decides.
func outage(err error) bool {
	err = lastError(err)
	var conn *neo4j.ConnectivityError
	var netErr net.Error
	if errors.As(err, &conn) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		switch ne.Code {
		case "Neo.TransientError.General.DatabaseUnavailable",
			"Neo.ClientError.Database.DatabaseNotFound":
			return true
		}
	}
	return false
}

// transient reports whether err is a failure worth retrying on a database
// that answers: a deadlock, a leader switch, a lock timeout.
func transient(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(lastError(err), &ne) && ne.IsRetriable()
}

// lastError is the error that ended a driver call: for an exhausted retry,
// the last attempt's.
func lastError(err error) error {
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) && len(limit.Errors) > 0 {
		return limit.Errors[len(limit.Errors)-1]
	}
	return err
}
