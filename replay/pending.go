package replay

import (
	"context"
	"sync"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
)

// Pending is what one run — an invoke with the nested replays it led to,
// or a turn — leaves to commit after it ran, in one transaction
// (procedures.RunRecord, docs/design.md "One commit per run"): the
// records of its decisions that were not stored before it ran
// (decide.Verdict.DurableFirst), each with its result, the results of
// those that were, and its uses. Every level of the run adds to it; the
// top level commits it (Replayer.Commit). It is safe for concurrent use.
type Pending struct {
	mu sync.Mutex
	rr procedures.RunRecord
}

// result sets on d what happened to the run it allowed (succeeded, or the
// class it failed under with err): a record stored before the run gets
// its result among the results, one stored with it carries it. It returns
// d with its result.
func (p *Pending) result(d audit.Decision, stored bool, err *sandbox.Error) audit.Decision {
	d.Result = health.ResultOf(FailureClass(err))
	p.mu.Lock()
	defer p.mu.Unlock()
	if stored {
		p.rr.Results = append(p.rr.Results, procedures.DecisionResult{ID: d.ID, Result: d.Result})
	} else {
		p.rr.Decisions = append(p.rr.Decisions, d)
	}
	return d
}

// Use adds a use of the run (procedures.Service.RunUse, BlockUse).
func (p *Pending) Use(in procedures.UseInput) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rr.Uses = append(p.rr.Uses, in)
}

// Commit commits p (procedures.Service.CommitRunWith), even if the request's
// deadline or its caller is gone by now: the run happened. When p holds
// records not stored before the run, their run must not be answered
// unless they are stored: a failure is then CodeUnavailable. Otherwise a
// failure is logged (the run happened, its decision is on record) and
// Commit returns nil.
func (r *Replayer) Commit(ctx context.Context, p *Pending) error {
	return r.CommitWith(ctx, p, nil)
}

// CommitWith is Commit through write, a store call that commits what p
// holds with a change of its own (procedures.Service.CommitRunWith).
func (r *Replayer) CommitWith(ctx context.Context, p *Pending, write func(procedures.RunRecord) ([]procedures.UseResult, error)) error {
	p.mu.Lock()
	rr := p.rr
	p.rr = procedures.RunRecord{}
	p.mu.Unlock()
	committed, err := r.svc.CommitRunWith(context.WithoutCancel(ctx), rr, write)
	if err == nil {
		return nil
	}
	ev := r.log.Warn().Err(err).Int("records", len(rr.Decisions)).Int("results", len(rr.Results)).Int("uses", len(rr.Uses))
	if committed || len(rr.Decisions) == 0 {
		ev.Msg("replay: a run could not be counted, or its result recorded on its decision")
		return nil
	}
	ev.Msg("replay: a run's decision could not be recorded; its answer is withheld")
	return fault.Errorf(fault.CodeUnavailable, "the record of the run could not be stored: its answer is withheld")
}
