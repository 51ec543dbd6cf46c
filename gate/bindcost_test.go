package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
)

// countedStore is the real embedded store counting every store call a
// turn can make (each is one round trip on Neo4j).
type countedStore struct {
	*embedded.Store
	replaytest.Counter
}

func (c *countedStore) count(name string) { c.Add(name) }

func (c *countedStore) Get(ctx context.Context, name string) (*procedures.Procedure, error) {
	c.count("Get")
	return c.Store.Get(ctx, name)
}

func (c *countedStore) GetMany(ctx context.Context, names []string) (map[string]*procedures.Procedure, error) {
	c.count("GetMany")
	return c.Store.GetMany(ctx, names)
}

func (c *countedStore) Version(ctx context.Context, name, codeHash string) (*procedures.Version, error) {
	c.count("Version")
	return c.Store.Version(ctx, name, codeHash)
}

func (c *countedStore) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	c.count("Catalogue")
	return c.Store.Catalogue(ctx)
}

func (c *countedStore) Policy(ctx context.Context, session, codeHash string) (gate.SessionPolicy, bool, error) {
	c.count("Policy")
	return c.Store.Policy(ctx, session, codeHash)
}

func (c *countedStore) Policies(ctx context.Context, session string) ([]gate.SessionPolicy, error) {
	c.count("Policies")
	return c.Store.Policies(ctx, session)
}

func (c *countedStore) Granted(ctx context.Context) ([]*procedures.Procedure, error) {
	c.count("Granted")
	return c.Store.Granted(ctx)
}

func (c *countedStore) AppendDecision(ctx context.Context, d audit.Decision) error {
	c.count("AppendDecision")
	return c.Store.AppendDecision(ctx, d)
}

func (c *countedStore) RecordUse(ctx context.Context, in procedures.UseInput) (procedures.UseResult, error) {
	c.count("RecordUse")
	return c.Store.RecordUse(ctx, in)
}

func (c *countedStore) RecordRun(ctx context.Context, rr procedures.RunRecord) ([]procedures.UseResult, error) {
	c.count("RecordRun")
	return c.Store.RecordRun(ctx, rr)
}

func (c *countedStore) GetApproval(ctx context.Context, id string) (*gate.TurnRecord, error) {
	c.count("GetApproval")
	return c.Store.GetApproval(ctx, id)
}

func (c *countedStore) TransitionTurn(ctx context.Context, next gate.TurnRecord, from []gate.TurnStatus, live bool, now time.Time, ds ...audit.Decision) (*gate.TurnRecord, error) {
	c.count("TransitionTurn")
	return c.Store.TransitionTurn(ctx, next, from, live, now, ds...)
}

// bindCostEnv is replaytest.BindCost over a counted embedded store: it
// returns the gate, the store, a turn its policy decides and one the grant
// decides.
func bindCostEnv(tb testing.TB) (*gate.Gate, *countedStore, gate.TurnRequest, gate.TurnRequest) {
	cs := &countedStore{Store: replaytest.OpenStore(tb)}
	g, policy, grant := replaytest.BindCost(tb, cs, cs)
	return g, cs, policy, grant
}

// TestBindingChecksCostNoStoreCall: a turn decided by a session policy and
// one decided by a durable grant make exactly the store calls they made
// before bindings (listed below, run included): the binding checks use
// only what the decision already read (the catalogue, the procedures
// ClassifyBlock resolved). The session's policies are read by its first
// turn only (the gate's policy index): the same turn again reads none.
func TestBindingChecksCostNoStoreCall(t *testing.T) {
	g, cs, policy, grant := bindCostEnv(t)
	for _, c := range []struct {
		name        string
		req         gate.TurnRequest
		reason      string
		first, then string
	}{
		{"policy", policy, audit.ReasonSessionPolicy, bindCostPolicyFirst, bindCostPolicyCalls},
		{"grant", grant, audit.ReasonDurableAutoRun, bindCostGrantFirst, bindCostGrantCalls},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i, want := range []string{c.first, c.then} {
				cs.Take()
				ans, err := g.Submit(context.Background(), c.req)
				if err != nil || !ans.Ran() || ans.Decision.Reason != c.reason || ans.Status != replay.StatusSucceeded {
					t.Fatalf("submit %d: %+v, %v", i, ans, err)
				}
				if got := cs.Take(); got != want {
					t.Fatalf("submit %d: store calls %s, want %s", i, got, want)
				}
			}
		})
	}
}

// The store calls of a turn decided (and run) by a policy and by a grant,
// as they were before bindings, but for the writes after the run: since
// one commit per run (docs/design.md "One commit per run") the turn's
// decision is appended before it runs (it may change state), and the rest
// — the nested procedure's decision with its result, the turn's result,
// the nested success and the turn's run in the health of a stored version
// of its code (none here) — is one RecordRun; and but for the policy read
// (Policy×1 before the policy index, ADR 0050): the session's first turn
// on an instance lists its policies (Policies×1), later ones read none
// until the store's authorization revision moves (the poller drops the
// index) or this gate writes one of them; and but for the catalogue
// (Catalogue×2 before the authorization cache, ADR 0052): read once after
// the setup's writes, by the policy's first turn, then trusted as the
// grants and policies are.
const (
	bindCostPolicyCalls = "AppendDecision×1 GetMany×1 Get×1 RecordRun×1"
	bindCostGrantCalls  = "AppendDecision×1 GetMany×1 Get×1 RecordRun×1"
	bindCostPolicyFirst = "AppendDecision×1 Catalogue×1 GetMany×1 Get×1 Policies×1 RecordRun×1"
	bindCostGrantFirst  = "AppendDecision×1 GetMany×1 Get×1 Policies×1 RecordRun×1"
)

// BenchmarkTurnDecidedByBinding measures a turn decided by a session
// policy and one decided by a durable grant, run included, in process on
// the embedded store.
func BenchmarkTurnDecidedByBinding(b *testing.B) {
	g, _, policy, grant := bindCostEnv(b)
	for _, c := range []struct {
		name string
		req  gate.TurnRequest
	}{{"policy", policy}, {"grant", grant}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if ans, err := g.Submit(context.Background(), c.req); err != nil || !ans.Ran() {
					b.Fatal(err)
				}
			}
		})
	}
}
