package gate

import (
	"context"
	"sync"

	"github.com/procgraph/procgraph/internal/cache"
)

// maxPolicyIndex bounds the policies the policy index keeps, over every
// session (a session with more is read from the store on each turn).
const maxPolicyIndex = 4096

// policyIndex is what the gate read of each session's policies (all of
// them: by code hash, and by their binding's Program), so that a turn a
// policy or a grant decides reads none from the store (docs/design.md
// "What an authorization binds to"). An entry — an empty one too — is
// trusted under the domain's one rule for cached authorizations
// (procedures/authcache.go): while the epoch it was read at is the one the
// turn's block was classified at (procedures.Classified.AuthEpoch, 0 when
// the poller of the store's authorization revision is not fresh, and
// nothing is trusted), so a policy set or revoked on another
// instance is seen here after the next poll, and until then a policy not
// yet seen leaves the turn asked. This gate's own policy writes drop the
// session's entry at once (SetPolicy, RevokePolicies, a resolution's
// remember: forget); a read begun before one of them is not kept (seq).
type policyIndex struct {
	mu sync.Mutex
	// seq counts this gate's policy writes (forget).
	seq     uint64
	entries *cache.Cache[string, policyEntry]
}

// policyEntry is one session's policies as read at epoch: byHash by code
// hash, byProgram the first (by code hash) of each binding's Program.
type policyEntry struct {
	epoch     uint64
	byHash    map[string]SessionPolicy
	byProgram map[string]SessionPolicy
}

func newPolicyIndex() *policyIndex {
	return &policyIndex{entries: cache.NewWeighted(maxPolicyIndex, func(_ string, e policyEntry) int { return 1 + len(e.byHash) })}
}

// entryOf indexes ps, a session's policies by code hash, read at epoch.
func entryOf(ps []SessionPolicy, epoch uint64) policyEntry {
	e := policyEntry{epoch: epoch, byHash: make(map[string]SessionPolicy, len(ps)), byProgram: map[string]SessionPolicy{}}
	for _, p := range ps {
		e.byHash[p.CodeHash] = p
		if p.Binding == nil || p.Binding.Program == "" {
			continue
		}
		if _, ok := e.byProgram[p.Binding.Program]; !ok {
			e.byProgram[p.Binding.Program] = p
		}
	}
	return e
}

// policies returns the session's policies: from the index while its entry
// was read at epoch (the authorization cache's, as the turn's block was
// classified; 0 trusts nothing), else read from the store (one Policies
// call) and kept under epoch unless this gate wrote a policy meanwhile.
// Errors are the store's.
func (x *policyIndex) policies(ctx context.Context, turns TurnStore, sessionID string, epoch uint64) (policyEntry, error) {
	x.mu.Lock()
	if e, ok := x.entries.Get(sessionID); ok && epoch != 0 && e.epoch == epoch {
		x.mu.Unlock()
		return e, nil
	}
	seq := x.seq
	x.mu.Unlock()
	ps, err := turns.Policies(ctx, sessionID)
	if err != nil {
		return policyEntry{}, err
	}
	e := entryOf(ps, epoch)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.seq == seq {
		x.entries.Add(sessionID, e)
	}
	return e, nil
}

// forget drops what the index holds of the session, after this gate wrote
// one of its policies (whether or not the write succeeded: it may have
// committed), so that the next turn reads them again.
func (x *policyIndex) forget(sessionID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seq++
	x.entries.Remove(sessionID)
}
