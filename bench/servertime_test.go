package bench

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// BenchmarkServerClock checks on Neo4j what the Find benchmark relies on:
// that the MEAN of the server's own time for a statement
// (ResultAvailableAfter + ResultConsumedAfter, whole milliseconds) over many
// runs estimates its true time without bias.
//
// Neo4j 5.26 computes each of the two as the difference of two
// java.time.Clock.millis() readings (bolt CreateStatementStateTransition
// and StatementImpl): a statement of true duration d starting at a random
// phase within a millisecond reports floor(start+d) - floor(start), whose
// expectation is exactly d. (Were it a duration truncated to whole
// milliseconds, the expectation would be about d - 0.5 ms, and a staircase
// in d.)
//
// The check gives a statement a known server-side duration: transaction A
// holds the write lock on a node of this run's namespace; statement B (in a
// managed write transaction) sets the same node and waits for the lock
// until A rolls back, hold ms after B was sent. The hold takes ten values a
// tenth of a millisecond apart (1.0 to 1.9 ms) in random order. For each,
// it logs the mean reported server time of B minus the mean hold: with an
// unbiased mean this excess is the same at every step (the server's time
// from receiving A's rollback to releasing the lock, waking B and finishing
// it), so the means follow the hold in tenths of a millisecond; with
// truncation and a steady excess they would form a staircase (a sawtooth
// excess). It also reports the least-squares slope of reported time on hold
// (1 when unbiased) and B's mean reported time without any lock. On a
// loaded machine the true hold overshoots and the excess is noisy: read it
// on a quiet one.
func BenchmarkServerClock(b *testing.B) {
	var t *target
	for _, x := range targets(b) {
		if x.driver != nil {
			t = x
		}
	}
	if t == nil {
		b.Skip("NEO4J_URI is not set")
	}
	ctx := context.Background()
	node := map[string]any{"ns": t.ns + "clock"}
	if _, err := neo4j.ExecuteQuery(ctx, t.driver, "MERGE (:BenchClock {ns: $ns})", node, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(t.db)); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_, _ = neo4j.ExecuteQuery(ctx, t.driver, "MATCH (n:BenchClock {ns: $ns}) DELETE n", node, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(t.db))
	}()
	lockStmt := "MATCH (n:BenchClock {ns: $ns}) SET n.v = $v RETURN n.v AS v"
	// setB runs B; started receives the time B's statement is sent.
	setB := func(started chan<- time.Time) (time.Duration, error) {
		sess := t.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: t.db})
		defer sess.Close(ctx)
		sum, err := neo4j.ExecuteWrite(ctx, sess, func(tx neo4j.ManagedTransaction) (neo4j.ResultSummary, error) {
			if started != nil {
				started <- time.Now()
			}
			res, err := tx.Run(ctx, lockStmt, map[string]any{"ns": node["ns"], "v": 2})
			if err != nil {
				return nil, err
			}
			return res.Consume(ctx)
		})
		if err != nil {
			return 0, err
		}
		return sum.ResultAvailableAfter() + sum.ResultConsumedAfter(), nil
	}
	// trial holds the lock for hold after B starts; it returns the true
	// hold (from B's send to A's rollback) and B's reported server time.
	trial := func(hold time.Duration) (time.Duration, time.Duration, error) {
		sess := t.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: t.db})
		defer sess.Close(ctx)
		a, err := sess.BeginTransaction(ctx)
		if err != nil {
			return 0, 0, err
		}
		res, err := a.Run(ctx, lockStmt, map[string]any{"ns": node["ns"], "v": 1})
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if err != nil {
			_ = a.Rollback(ctx)
			return 0, 0, err
		}
		started := make(chan time.Time, 1)
		type out struct {
			d   time.Duration
			err error
		}
		done := make(chan out, 1)
		go func() {
			d, err := setB(started)
			done <- out{d, err}
		}()
		t0 := <-started
		if rest := hold - time.Since(t0) - 200*time.Microsecond; rest > 0 {
			time.Sleep(rest)
		}
		for time.Since(t0) < hold {
		}
		known := time.Since(t0)
		if err := a.Rollback(ctx); err != nil {
			return 0, 0, err
		}
		o := <-done
		return known, o.d, o.err
	}
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	const perStep = 100
	holds := make([]time.Duration, 0, 10*perStep)
	for step := range 10 {
		for range perStep {
			holds = append(holds, time.Millisecond+time.Duration(step)*100*time.Microsecond)
		}
	}
	rand.Shuffle(len(holds), func(i, j int) { holds[i], holds[j] = holds[j], holds[i] })
	for b.Loop() {
		// B alone, no lock: its own time.
		var alone float64
		for range perStep {
			d, err := setB(nil)
			if err != nil {
				b.Fatal(err)
			}
			alone += ms(d)
		}
		alone /= perStep
		type acc struct{ known, server float64 }
		steps := map[time.Duration]*acc{}
		var sx, sy, sxx, sxy, n float64
		for _, h := range holds {
			known, server, err := trial(h)
			if err != nil {
				b.Fatal(err)
			}
			a := steps[h]
			if a == nil {
				a = &acc{}
				steps[h] = a
			}
			x, y := ms(known), ms(server)
			a.known += x
			a.server += y
			sx, sy, sxx, sxy, n = sx+x, sy+y, sxx+x*x, sxy+x*y, n+1
		}
		slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
		lo, hi := 1e9, -1e9
		for step := range 10 {
			h := time.Millisecond + time.Duration(step)*100*time.Microsecond
			a := steps[h]
			k, s := a.known/perStep, a.server/perStep
			lo, hi = min(lo, s-k), max(hi, s-k)
			b.Logf("hold %.1f ms: mean true hold %.3f ms, mean reported %.3f ms, excess %+.3f ms", ms(h), k, s, s-k)
		}
		b.Logf("B alone (no lock): mean reported %.3f ms; reported on true hold: slope %.3f; excess range %.3f..%.3f ms", alone, slope, lo, hi)
		b.ReportMetric(slope, "slope")
		b.ReportMetric(hi-lo, "excess-range-ms")
		b.ReportMetric((sy-sx)/n, "excess-ms")
		b.ReportMetric(alone, "alone-ms")
	}
}
