package replay

import (
	"context"

	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/recording"
)

// ActorBackground is the actor background verifications are admitted as.
const ActorBackground = "procgraph:verify"

// VerifyStale verifies every stale version against its recordings, one at
// a time, as ActorBackground, each in a sandbox slot admission can spare
// (sandbox.Admission.TryAcquireSpare: no replay waiting, another slot
// free), so it never makes a live replay wait behind it in the queue; it
// returns how many it verified; versions without a recording
// are skipped. A version that passes under the current catalogue is
// stale no more (Verify).
func (r *Replayer) VerifyStale(ctx context.Context) (int, error) {
	stale, err := r.svc.StaleVersions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, v := range stale {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		ans, err := r.verify(ctx, v.Procedure, v.CodeHash, ActorBackground, true)
		if err != nil {
			r.log.Warn().Err(err).Str("procedure", v.Procedure).Str("code_hash", v.CodeHash).Msg("verify: a background verification failed to run")
			continue
		}
		if ans.Verification.Status != recording.VerificationNone {
			n++
		}
	}
	return n, nil
}

// WatchCatalogue runs VerifyStale after every catalogue change the
// service's feed publishes (changes during a pass lead to one more pass),
// until ctx ends.
func (r *Replayer) WatchCatalogue(ctx context.Context) {
	sub := r.svc.Changes().Subscribe(changes.DefaultFeedBuffer)
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Done():
			return
		case <-sub.Ready():
		}
		changed := false
		for _, c := range sub.Take() {
			changed = changed || c.Kind == changes.ChangeCatalogue || c.Kind == changes.ChangeLost
		}
		if !changed {
			continue
		}
		n, err := r.VerifyStale(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.Warn().Err(err).Msg("verify: the background verification of stale versions stopped")
		}
		r.log.Info().Int("verified", n).Msg("verify: stale versions verified after a catalogue change")
	}
}
