package gate

import (
	"context"
	"encoding/json"
	"time"

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
// only while the turn holds those. deadline is the turn's: past it the
// turn never runs, and the block goes (forgetPast).
type keptBlock struct {
	code, dialect, args string
	deadline            time.Time
	b                   *replay.Block
}

// keep keeps b, the block of turn cur prepared from code and cur's dialect
// with its arguments (b.Arguments, as the turn stores them), until the turn
// runs or never will (forget, forgetPast). The gate keeps its own copy of
// b.
func (g *Gate) keep(cur TurnRecord, code string, b *replay.Block) {
	args, err := json.Marshal(b.Arguments)
	if err != nil {
		g.forget(cur.ID)
		return
	}
	cp := *b
	g.blocks.Add(cur.ID, keptBlock{code: code, dialect: cur.Dialect, args: string(args), deadline: cur.Deadline, b: &cp})
}

// forget drops the block kept for turn id: the turn ran, or never will.
func (g *Gate) forget(id string) { g.blocks.Remove(id) }

// forgetPast drops the blocks kept for turns past their deadline at now
// (the sweep's: also of turns done on another instance), so that no code
// or argument values stay in memory longer than their turn can run.
func (g *Gate) forgetPast(now time.Time) {
	g.blocks.RemoveIf(func(_ string, k keptBlock) bool { return !now.Before(k.deadline) })
}

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
