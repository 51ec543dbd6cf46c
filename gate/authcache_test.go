package gate_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/replay/replaytest"
)

// revisionStore is the counted store whose authorization revision cannot
// be read while failing is set (an outage of that one read).
type revisionStore struct {
	*countedStore
	failing atomic.Bool
}

func (s *revisionStore) AuthRevision(ctx context.Context) (uint64, error) {
	if s.failing.Load() {
		return 0, errors.New("the revision cannot be read")
	}
	return s.countedStore.AuthRevision(ctx)
}

// authWorld is one instance over a revisionStore, with the turns of
// replaytest.Authorized: a grant and a session policy of one program.
func authWorld(t *testing.T) (*revisionStore, *replaytest.Clock, *replaytest.Instance) {
	t.Helper()
	rs := &revisionStore{countedStore: &countedStore{Store: replaytest.OpenStore(t)}}
	clk := replaytest.NewClock(authStart)
	in := replaytest.NewInstance(t, rs, rs, clk)
	replaytest.Authorized(t, in)
	in.Poll(t)
	return rs, clk, in
}

// bothCovered submits the grant's and the policy's turns on in, each of
// which must run, decided by its authorization.
func bothCovered(t *testing.T, in *replaytest.Instance, when string) {
	t.Helper()
	if !in.CoveredBy(t, replaytest.InstancesGrantTurn, audit.ReasonDurableAutoRun) {
		t.Fatalf("%s: the grant does not cover its program", when)
	}
	if !in.CoveredBy(t, replaytest.InstancesPolicyTurn, audit.ReasonSessionPolicy) {
		t.Fatalf("%s: the policy does not cover its program", when)
	}
}

// authStart is when authWorld's clock starts.
var authStart = time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)

// containsCall reports whether calls (a countedStore Take) counts name.
func containsCall(calls, name string) bool {
	return strings.HasPrefix(calls, name+"×") || strings.Contains(calls, " "+name+"×")
}

// authReads is what of calls (a countedStore Take) reads a grant or a
// policy: the procedure, the session's policies.
func authReads(calls string) bool { return policyReads(calls) || containsCall(calls, "Get") }

// TestAuthorizedTurnsReadNoStore: a turn a grant decides and one a
// session policy decides read neither the procedure nor a policy from the
// store — nor the catalogue it is classified with — however long after the
// cache was filled, while the poller reads an unchanged authorization
// revision (ADR 0052): no store read at all; the only store calls left
// are the writes of the audit record of its decision and of its run's one
// commit.
func TestAuthorizedTurnsReadNoStore(t *testing.T) {
	rs, clk, in := authWorld(t)
	bothCovered(t, in, "filling")
	for i := range 3 {
		clk.Add(time.Hour) // long after the entries were filled
		in.Poll(t)         // the revision did not move: the runs moved nothing
		rs.Take()
		bothCovered(t, in, "later")
		if got := rs.Take(); authReads(got) || got != authorizedTurnCalls {
			t.Fatalf("round %d: the two turns made the store calls %s, want %s (no store read)", i, got, authorizedTurnCalls)
		}
	}
}

// authorizedTurnCalls is the store calls of the two turns of
// TestAuthorizedTurnsReadNoStore together: each appends its decision and
// commits its run; neither reads.
const authorizedTurnCalls = "AppendDecision×2 RecordRun×2"

// TestAuthorizationFailsClosed: while the poller cannot read the
// authorization revision, what the cache holds is trusted for three poll
// intervals after its last read, then not at all: each turn reads its
// grant and policies from the store (and is decided as the store says)
// until a poll succeeds again.
func TestAuthorizationFailsClosed(t *testing.T) {
	rs, clk, in := authWorld(t)
	bothCovered(t, in, "filling")
	rs.failing.Store(true)
	for _, step := range []struct {
		after   time.Duration
		trusted bool
	}{{time.Second, true}, {time.Second, true}, {time.Second, true}, {time.Second, false}, {time.Hour, false}} {
		clk.Add(step.after)
		if err := in.Svc.PollAuthorization(context.Background()); err == nil {
			t.Fatal("the poll read a revision the store cannot give")
		}
		rs.Take()
		if !in.CoveredBy(t, replaytest.InstancesGrantTurn, audit.ReasonDurableAutoRun) {
			t.Fatal("while the poll fails: the grant does not cover its program")
		}
		if got := rs.Take(); containsCall(got, "Get") == step.trusted {
			t.Fatalf("%v after the last good poll: the grant's turn made the store calls %s; want the grant read from the cache %v", clk.Now().Sub(authStart), got, step.trusted)
		}
		if !in.CoveredBy(t, replaytest.InstancesPolicyTurn, audit.ReasonSessionPolicy) {
			t.Fatal("while the poll fails: the policy does not cover its program")
		}
		if got := rs.Take(); policyReads(got) == step.trusted {
			t.Fatalf("%v after the last good poll: the policy's turn made the store calls %s; want the policies read from the cache %v", clk.Now().Sub(authStart), got, step.trusted)
		}
	}
	rs.failing.Store(false)
	in.Poll(t)
	bothCovered(t, in, "polled again")
	rs.Take()
	bothCovered(t, in, "from the cache again")
	if got := rs.Take(); authReads(got) {
		t.Fatalf("after a good poll: store calls %s, want no read of a grant or a policy", got)
	}
}

// TestAcrossInstances: replaytest.AcrossInstances on the embedded store.
func TestAcrossInstances(t *testing.T) {
	s := replaytest.OpenStore(t)
	replaytest.AcrossInstances(t, s, s)
}

// BenchmarkAuthorizedTurn measures a turn a session policy decides and one
// a durable grant decides, run included, in process on the embedded store
// holding 1k and 100k other procedures (storetest.Fill), long after the
// authorization cache was filled and the poller read an unchanged
// revision: store_reads/turn counts every store read of the turn (0: the
// grant, the policy and the catalogue come from memory; the turn's two
// writes, its decision and its run's commit, are not counted).
func BenchmarkAuthorizedTurn(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(strconv.Itoa(n/1000)+"k", func(b *testing.B) {
			cs := &countedStore{Store: replaytest.OpenStore(b)}
			storetest.Fill(b, cs.Store, n)
			clk := replaytest.NewClock(authStart)
			in := replaytest.NewInstance(b, cs, cs, clk)
			cat, err := cs.Catalogue(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			replaytest.Authorized(b, in, cat.Tools...)
			in.Poll(b)
			for _, c := range []struct {
				name   string
				req    gate.TurnRequest
				reason string
			}{
				{"policy", replaytest.InstancesPolicyTurn, audit.ReasonSessionPolicy},
				{"grant", replaytest.InstancesGrantTurn, audit.ReasonDurableAutoRun},
			} {
				b.Run(c.name, func(b *testing.B) {
					if !in.CoveredBy(b, c.req, c.reason) { // fills the cache
						b.Fatal("not covered")
					}
					clk.Add(time.Hour)
					in.Poll(b)
					cs.Take()
					turns := 0
					for b.Loop() {
						ans, err := in.Gate.Submit(context.Background(), c.req)
						if err != nil || !ans.Ran() || ans.Decision.Reason != c.reason {
							b.Fatalf("submit: %+v, %v", ans, err)
						}
						turns++
					}
					b.ReportMetric(float64(storeReads(cs.Take()))/float64(turns), "store_reads/turn")
				})
			}
		})
	}
}

// storeReads is the number of reads among calls (a countedStore Take): all
// but the writes of a turn's decision and of its run.
func storeReads(calls string) int {
	n := 0
	for _, c := range strings.Fields(calls) {
		name, count, _ := strings.Cut(c, "×")
		if name == "AppendDecision" || name == "RecordRun" {
			continue
		}
		k, _ := strconv.Atoi(count)
		n += k
	}
	return n
}
