package replay

import (
	"context"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// What the external tests (package replay_test) reach inside the package.

// UpstreamRequest is the body the HTTP dispatcher posts upstream.
type UpstreamRequest = upstreamRequest

// LocalActor is the actor of RunFile's decisions.
const LocalActor = localActor

// Chain is a nested call's chain of procedures.
type Chain = chain

// NewChain returns the chain of a nested call under req along path.
func NewChain(req InvokeRequest, usageKey string, path []string) *Chain {
	return &chain{req: req, usageKey: usageKey, path: path}
}

// CallNested is callNested.
func (r *Replayer) CallNested(ctx context.Context, c *Chain, name string, args map[string]any) (any, error) {
	return r.callNested(ctx, c, name, args)
}

// SetDispatcher replaces r's dispatcher.
func (r *Replayer) SetDispatcher(d Dispatcher) { r.dispatcher = d }

// SetAdmission replaces r's admission.
func (r *Replayer) SetAdmission(a *sandbox.Admission) { r.opts.Admission = a }

// SetTimeout replaces r's run timeout.
func (r *Replayer) SetTimeout(d time.Duration) { r.opts.Limits.Timeout = d }

// Preparations is how many blocks r prepared (PrepareBlock, and an
// invoke's prepare).
func (r *Replayer) Preparations() int64 { return r.preparations.Load() }
