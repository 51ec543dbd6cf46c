package gate

import (
	"context"
	"time"
)

// sweptStatuses are the statuses of the turns a deadline can still change.
var sweptStatuses = []TurnStatus{TurnPending, TurnApproved, TurnRunning}

// Sweep applies the deadlines of every open turn in the store (settle), as
// reading each one would: a pending or approved turn past its deadline is
// expired, a running turn whose run is lost is ended as failed, a running
// one past its deadline loses its code and argument values — also the turns
// nobody reads again; the blocks this gate kept for turns past their
// deadlines go too. It returns how many turns it changed. Every change
// is a compare-and-set, so instances sweeping one store at once change each
// turn once, and a run that marks itself done is never overwritten.
func (g *Gate) Sweep(ctx context.Context) (int, error) {
	g.forgetPast(g.r.Now())
	changed := 0
	for _, st := range sweptStatuses {
		f := ApprovalFilter{Status: st, Limit: MaxApprovalLimit}
		for {
			page, err := g.turns.ListApprovals(ctx, f)
			if err != nil {
				return changed, err
			}
			for _, cur := range page {
				_, ok, err := g.settle(ctx, cur)
				if err != nil {
					return changed, err
				}
				if ok {
					changed++
				}
			}
			if len(page) < f.Limit {
				break
			}
			f.Before = page[len(page)-1].ID
		}
	}
	return changed, nil
}

// Sweeper sweeps every interval (DefaultSweepInterval when 0) until ctx
// ends. A failed sweep is logged and tried again at the next interval.
func (g *Gate) Sweeper(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := g.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			g.r.Logger().Warn().Err(err).Int("changed", n).Msg("turn sweep failed; trying again at the next interval")
		case n > 0:
			g.r.Logger().Info().Int("changed", n).Msg("turn sweep: expired, ended or purged turns past their deadlines")
		}
	}
}
