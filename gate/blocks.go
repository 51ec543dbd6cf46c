package gate

import (
	"context"
	"encoding/json"

	"github.com/procgraph/procgraph/replay"
)

// maxKeptBlocks bounds the prepared blocks a gate keeps (Gate.blocks)
// whatever Options.MaxPending says; a block not kept is prepared again.
const maxKeptBlocks = 4096

// keptBlocks is how many prepared blocks a gate keeps: twice the pending
// approvals it admits, so that the approved turns waiting to run keep
// theirs too, within maxKeptBlocks.
func keptBlocks(maxPending int) int { return min(2*maxPending, maxKeptBlocks) }

// keptBlock is a turn's prepared block as the gate keeps it between the
// turn's submission, its resolution and its run, with the code, dialect and
// arguments (as JSON) it was prepared from: it stands for the stored turn
// only while the turn holds those.
type keptBlock struct {
	code, dialect, args string
	b                   *replay.Block
}

// keep keeps b, the block of turn id prepared from code and dialect with
// its arguments (b.Arguments, as the turn stores them), until the turn runs
// or never will (forget). The gate keeps its own copy of b.
func (g *Gate) keep(id, code, dialect string, b *replay.Block) {
	args, err := json.Marshal(b.Arguments)
	if err != nil {
		g.forget(id)
		return
	}
	cp := *b
	g.blocks.Add(id, keptBlock{code: code, dialect: dialect, args: string(args), b: &cp})
}

// forget drops the block kept for turn id: the turn ran, or never will.
func (g *Gate) forget(id string) { g.blocks.Remove(id) }

// turnBlock is the block of the stored turn cur with code (its own, or the
// operator's replacement) as preparing it now would make it. A turn's block
// is prepared once, when it is submitted: the block kept for it (keep) —
// when it was prepared from code, cur's dialect and cur's arguments — is
// rechecked under the current catalogue and store (replay.Replayer.Recheck:
// classified anew, its binding compared). Otherwise — another instance's
// turn, an edited block, a binding that changed since — it is prepared
// again from code (replay.Replayer.PrepareBlock), with that preparation's
// errors (arguments that no longer fit the schema typed from the current
// catalogue, say).
func (g *Gate) turnBlock(ctx context.Context, cur *TurnRecord, code string) (*replay.Block, error) {
	if k, ok := g.blocks.Get(cur.ID); ok && k.code == code && k.dialect == cur.Dialect {
		if args, err := json.Marshal(cur.Arguments); err == nil && string(args) == k.args {
			b, ok, err := g.r.Recheck(ctx, k.b)
			if err != nil || ok {
				return b, err
			}
		}
	}
	return g.r.PrepareBlock(ctx, code, cur.Dialect, cur.Arguments)
}
