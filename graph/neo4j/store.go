// Package neo4j is the Neo4j implementation of procedures.Store.
//
// Every statement it runs is a .cypher file of package cypher, run with
// parameters in a managed transaction (session.ExecuteRead or ExecuteWrite,
// which retry transient failures: the work functions here have no effect
// outside their transaction and rebuild their results on every attempt).
// Reads run on read sessions, so a cluster routes them to readers; a shared
// bookmark manager keeps a read after a write of the same process causally
// consistent.
//
// The graph, as an analyst sees it in Neo4j Browser:
//
//	(:Cause {name, description})-[:INVESTIGATED_BY {frequency}]->(:Procedure)
//	(:Procedure {name, signature, summary, frequency, use_count, created_at,
//	             updated_at, last_used_at, rank, code_hash, status, opaque,
//	             grant_*})
//	(:Procedure)-[:CALLS]->(:Tool {name, in_catalogue, description, read_only,
//	                               external_access, input_schema, server,
//	                               upstream_name, listed})
//	(:Procedure)-[:HAS_VERSION]->(:ProcedureVersion {id, procedure, code_hash,
//	             code, dialect, parameters, input_schema, opaque, warnings,
//	             summary, metadata, captured_at, frequency, status})
//	(:Procedure)-[:CURRENT]->(:ProcedureVersion)   the current version
//	(:Decision {id, kind, procedure, code_hash, ...})-[:ABOUT]->(:Procedure)
//	(:UsageKey {id, scope, key, procedure, ...})    one per counted key
//	(:Catalogue {id: "current", revision})
//
// A Procedure mirrors the code_hash, status and opacity of its current
// version so that Find filters without a traversal, and keeps rank, Find's
// order (frequency, last_used_at, name) as one indexed string, so that Find
// without filters reads its page from the index in order. JSON-like values
// (input_schema, metadata, warnings) are JSON strings; times are datetimes
// in UTC at millisecond precision.
package neo4j

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/storewrap"
	"github.com/procgraph/procgraph/procedures"
)

// Config says where the Neo4j server is.
type Config struct {
	URI      string // bolt://host:7687, or neo4j://host:7687 for routing
	Username string // empty means no authentication
	Password string
	Database string // empty means the server's default database
	// Logger receives the store's diagnostics: the backend errors behind
	// CodeUnavailable and CodeInternal. The zero Logger discards them.
	Logger zerolog.Logger
}

// maxRetryTime bounds how long a transaction that fails transiently (a
// deadlock, a leader switch) is retried; an outage is never waited on (see
// breaker).
const maxRetryTime = 15 * time.Second

// Store is a procedures.Store on Neo4j. It owns its driver: open one Store
// per process and share it.
type Store struct {
	driver    neo4j.DriverWithContext
	db        string
	log       zerolog.Logger
	bookmarks neo4j.BookmarkManager
	closed    atomic.Bool
	breaker   *storewrap.Breaker
	// jsonCaches keep decoded JSON properties (values.go).
	*jsonCaches
	// driverConfig is the configuration the driver was built with.
	driverConfig config.Config
	// classes are the procedure classes Find has read (findOne).
	classes classCache
	// catalogue is the last catalogue Catalogue decoded (by revision).
	catalogue atomic.Pointer[procedures.Catalogue]
	// searchFresh keeps search read-your-writes (searchfresh.go).
	searchFresh *searchFreshness
	// dumpPage is the records one Dump read returns (dumpPageSize; tests
	// make it small to page through a small store).
	dumpPage int
	// rankBatch is the procedures one backfillRank transaction updates
	// (rankBatch; tests make it small to go past one batch fast).
	rankBatch int
}

// The store implements procedures.Store and each of its areas (checked
// at compile time).
var (
	_ procedures.Store          = (*Store)(nil)
	_ procedures.ProcedureStore = (*Store)(nil)
	_ procedures.CauseStore     = (*Store)(nil)
	_ procedures.CatalogueStore = (*Store)(nil)
	_ procedures.GrantStore     = (*Store)(nil)
	_ procedures.DecisionStore  = (*Store)(nil)
	_ procedures.RunStore       = (*Store)(nil)
	_ procedures.DriftStore     = (*Store)(nil)
)

// Open connects to the server cfg names, verifies that it answers and
// applies the schema (idempotently). It returns CodeInvalid for a config
// without URI and CodeUnavailable when the server cannot be reached.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	s, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.applySchema(ctx); err != nil {
		_ = s.driver.Close(ctx)
		return nil, err
	}
	return s, nil
}

// connect is Open without the schema: a store on a database whose schema
// is known to be applied (the tests' stores after the first).
func connect(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URI == "" {
		return nil, fault.Errorf(fault.CodeInvalid, "neo4j: the URI is required")
	}
	auth := neo4j.NoAuth()
	if cfg.Username != "" {
		auth = neo4j.BasicAuth(cfg.Username, cfg.Password, "")
	}
	s := &Store{jsonCaches: newJSONCaches(), db: cfg.Database, log: cfg.Logger, searchFresh: newSearchFreshness(), dumpPage: dumpPageSize, rankBatch: rankBatch}
	driver, err := neo4j.NewDriverWithContext(cfg.URI, auth, func(c *config.Config) {
		// One attempt per driver call: inTx retries transient failures
		// itself and never waits on an outage.
		c.MaxTransactionRetryTime = 0
		c.SocketConnectTimeout = connectTimeout
		c.ConnectionAcquisitionTimeout = acquireTimeout
		c.Log = driverLogger{cfg.Logger}
		// No usage telemetry: it is one more message (and answer) in the
		// first round trip of every managed transaction.
		c.TelemetryDisabled = true
		s.driverConfig = *c
	})
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "neo4j: invalid URI %q", cfg.URI)
	}
	s.driver = driver
	s.breaker = storewrap.NewBreaker(driver.VerifyConnectivity, errDown)
	s.breaker.OnTrip = func(cause error) {
		s.log.Warn().Err(cause).Msg("neo4j store: the database is unreachable; answering unavailable at once until a probe succeeds")
	}
	s.breaker.OnClose = func(down time.Duration) {
		s.log.Info().Dur("down", down).Msg("neo4j store: the database answers again")
	}
	s.bookmarks = driver.ExecuteQueryBookmarkManager()
	if err := driver.VerifyConnectivity(ctx); err != nil {
		_ = driver.Close(ctx)
		if isAuthFailure(err) {
			// Reachable, but the credentials are refused: named as such,
			// not as an outage.
			return nil, fault.Errorf(fault.CodeUnavailable, "neo4j: authentication failed: the server at %s refused the username and password (NEO4J_USERNAME, NEO4J_PASSWORD)", cfg.URI)
		}
		return nil, s.mapError("open", err)
	}
	return s, nil
}

// Close releases the driver. Later calls return CodeUnavailable; a second
// Close does nothing.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.breaker.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.mapError("close", s.driver.Close(ctx))
}

// Ping checks that the database answers a read.
func (s *Store) Ping(ctx context.Context) error {
	_, err := query(ctx, s, "ping", neo4j.AccessModeRead, "ping", nil)
	return err
}

// work is a transaction function: it may run several times, so it must not
// have effects outside tx.
type work[T any] func(ctx context.Context, tx neo4j.ManagedTransaction) (T, error)

// readTx runs w in a read transaction on a read session.
func readTx[T any](ctx context.Context, s *Store, op string, w work[T]) (T, error) {
	return inTx(ctx, s, op, neo4j.AccessModeRead, w)
}

// writeTx runs w in a write transaction.
func writeTx[T any](ctx context.Context, s *Store, op string, w work[T]) (T, error) {
	return inTx(ctx, s, op, neo4j.AccessModeWrite, w)
}

// inTx runs w in a transaction function of the given mode, with retry's
// breaker and retries.
func inTx[T any](ctx context.Context, s *Store, op string, mode neo4j.AccessMode, w work[T]) (T, error) {
	var v T
	err := retry(ctx, s, op, func() error {
		sess := s.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode, DatabaseName: s.db, BookmarkManager: s.bookmarks})
		defer sess.Close(ctx)
		fn := func(tx neo4j.ManagedTransaction) (T, error) { return w(ctx, tx) }
		var err error
		if mode == neo4j.AccessModeRead {
			v, err = neo4j.ExecuteRead(ctx, sess, fn)
		} else {
			v, err = neo4j.ExecuteWrite(ctx, sess, fn)
		}
		return err
	})
	return v, err
}

// query runs the stored query name as the only statement of a transaction
// of the given mode and returns its records, with retry's breaker and
// retries. It costs one round trip less than inTx (neo4j.ExecuteQuery sends
// BEGIN with the statement), but the transaction commits whatever the
// records say: statements run this way decide everything themselves.
func query(ctx context.Context, s *Store, op string, mode neo4j.AccessMode, name string, params map[string]any) ([]*neo4j.Record, error) {
	opts := []neo4j.ExecuteQueryConfigurationOption{
		neo4j.ExecuteQueryWithDatabase(s.db), neo4j.ExecuteQueryWithBookmarkManager(s.bookmarks),
	}
	if mode == neo4j.AccessModeRead {
		opts = append(opts, neo4j.ExecuteQueryWithReadersRouting())
	}
	var recs []*neo4j.Record
	err := retry(ctx, s, op, func() error {
		res, err := neo4j.ExecuteQuery(ctx, s.driver, cypher.Query(name), params, neo4j.EagerResultTransformer, opts...)
		if err != nil {
			return err
		}
		recs = res.Records
		if o, _ := ctx.Value(observerKey{}).(QueryObserver); o != nil && res.Summary != nil {
			o(name, res.Summary.ResultAvailableAfter(), res.Summary.ResultConsumedAfter())
		}
		return nil
	})
	return recs, err
}

// queryChecked is query for a write statement whose records decide whether
// its transaction may commit: check sees them before the COMMIT is sent,
// and an error of check rolls the transaction back and is returned. A
// managed transaction (neo4j.ExecuteQuery, BEGIN sent with the statement):
// two round trips, as query's, where inTx's ExecuteWrite waits for BEGIN's
// answer first and takes three (ADR 0056). check may be called again on a
// retry.
func queryChecked(ctx context.Context, s *Store, op, name string, params map[string]any, check func([]*neo4j.Record) error) error {
	return retry(ctx, s, op, func() error {
		_, err := neo4j.ExecuteQuery(ctx, s.driver, cypher.Query(name), params,
			func() neo4j.ResultTransformer[struct{}] { return &checkedRecords{ctx: ctx, name: name, check: check} },
			neo4j.ExecuteQueryWithDatabase(s.db), neo4j.ExecuteQueryWithBookmarkManager(s.bookmarks), neo4j.ExecuteQueryWithWritersRouting())
		return err
	})
}

// checkedRecords is queryChecked's result transformer: it keeps the
// records and hands them to check once they are all pulled.
type checkedRecords struct {
	ctx   context.Context
	name  string
	check func([]*neo4j.Record) error
	recs  []*neo4j.Record
}

func (c *checkedRecords) Accept(r *neo4j.Record) error {
	c.recs = append(c.recs, r)
	return nil
}

func (c *checkedRecords) Complete(_ []string, sum neo4j.ResultSummary) (struct{}, error) {
	if o, _ := c.ctx.Value(observerKey{}).(QueryObserver); o != nil && sum != nil {
		o(c.name, sum.ResultAvailableAfter(), sum.ResultConsumedAfter())
	}
	return struct{}{}, c.check(c.recs)
}

// retry runs attempt (one driver call) while the breaker is closed; else it
// fails at once. A transient failure (a deadlock, a leader switch) is
// retried with backoff up to maxRetryTime; an outage is retried at once a
// couple of times (a pooled connection the server closed is discarded with
// all its siblings), then opens the breaker and fails. Retrying is safe
// after a commit whose answer was lost: every statement and work function
// is idempotent. Errors come back mapped (mapError).
func retry(ctx context.Context, s *Store, op string, attempt func() error) error {
	if s.closed.Load() {
		return errClosed
	}
	if err := s.breaker.Allow(); err != nil {
		return err
	}
	start := time.Now()
	delay := 5 * time.Millisecond
	for n := 1; ; n++ {
		err := attempt()
		if err == nil {
			return nil
		}
		switch {
		case ctx.Err() != nil:
		case outage(err):
			if n < 3 {
				continue
			}
			s.breaker.Trip(err)
		case transient(err) && time.Since(start)+delay < maxRetryTime:
			if sleep(ctx, jitter(delay)) == nil {
				delay = min(2*delay, time.Second)
				continue
			}
		}
		return s.mapError(op, err)
	}
}

// jitter returns d ± 20%.
func jitter(d time.Duration) time.Duration {
	return d - d/5 + time.Duration(rand.Int64N(int64(d)*2/5+1))
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// collect runs the stored query name with params and returns its records.
func collect(ctx context.Context, tx neo4j.ManagedTransaction, name string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := tx.Run(ctx, cypher.Query(name), params)
	if err != nil {
		return nil, err
	}
	recs, err := res.Collect(ctx)
	if err == nil {
		observe(ctx, name, res)
	}
	return recs, err
}

// exec runs the stored query name with params, discarding its records.
func exec(ctx context.Context, tx neo4j.ManagedTransaction, name string, params map[string]any) error {
	res, err := tx.Run(ctx, cypher.Query(name), params)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	if err == nil {
		observe(ctx, name, res)
	}
	return err
}

// QueryObserver receives, for each statement a store call runs, the stored
// query's name and the server's own time for it: until the first record was
// available, and until the last was consumed (the driver's result summary).
type QueryObserver func(query string, availableAfter, consumedAfter time.Duration)

type observerKey struct{}

// WithQueryObserver returns ctx that makes the store calls it is passed to
// report every statement to o (benchmarks compare the server's time with
// the store call's).
func WithQueryObserver(ctx context.Context, o QueryObserver) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// observe reports a consumed result to ctx's QueryObserver, if any.
func observe(ctx context.Context, name string, res neo4j.ResultWithContext) {
	o, _ := ctx.Value(observerKey{}).(QueryObserver)
	if o == nil {
		return
	}
	if sum, err := res.Consume(ctx); err == nil {
		o(name, sum.ResultAvailableAfter(), sum.ResultConsumedAfter())
	}
}
