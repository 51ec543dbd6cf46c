package procedures

import (
	"context"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/health"
)

// decisionCounter counts decision records, by kind, outcome and reason
// (metrics.Registry is one). It must not block.
type decisionCounter interface {
	CountDecision(audit.Decision)
}

// decisionAppender stores audit records (a Store is one).
type decisionAppender interface {
	// AppendDecision appends an audit record; see Store.AppendDecision.
	AppendDecision(ctx context.Context, d audit.Decision) error
}

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// Counter counts every record once it is stored; optional.
	Counter decisionCounter
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// Recorder is the one home of decision records, as OPA's decision logger:
// every decision procgraph takes — an invoke over HTTP or MCP, a nested
// proc__ replay, `procgraph run`, a grant, revoke, promote, retire or catalogue
// change — is built, checked against the audit rule (CheckAudit), stored
// and counted here, and nowhere else. It is safe for concurrent use.
type Recorder struct {
	store   decisionAppender // nil: records are built and checked, stored nowhere
	counter decisionCounter
	now     func() time.Time
}

// NewRecorder returns a Recorder appending to store. A nil store makes an
// offline recorder (`procgraph run`): records are built and checked as
// everywhere, counted, and stored nowhere.
func NewRecorder(store decisionAppender, opts RecorderOptions) *Recorder {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Recorder{store: store, counter: opts.Counter, now: opts.Now}
}

// Build completes d into a record without storing it: a fresh id and the
// time (UTC, milliseconds) when unset, an empty allow-set rather than
// none, actor "anonymous" when none is named; then checks it against the
// audit rule (CheckAudit). Records a store writes in the same transaction
// as the change they authorise are built here and committed through
// RecordWith.
func (r *Recorder) Build(d audit.Decision) (audit.Decision, error) {
	if d.At.IsZero() {
		d.At = r.now().UTC().Truncate(time.Millisecond)
	}
	if d.ID == "" {
		d.ID = audit.NewDecisionID(r.now())
	}
	if d.AllowedTools == nil {
		d.AllowedTools = []string{}
	}
	if d.Actor == "" {
		d.Actor = "anonymous"
	}
	if err := CheckAudit(d); err != nil {
		return audit.Decision{}, err
	}
	return d, nil
}

// Record builds d (Build), appends it to the store and counts it, and
// returns the record as stored. Nothing is counted when it cannot be
// stored; a caller must then act as if nothing was decided (run nothing).
// Returns the codes of Build (fault.CodeInvalid, fault.CodeInternal) and of
// Store.AppendDecision.
func (r *Recorder) Record(ctx context.Context, d audit.Decision) (audit.Decision, error) {
	return r.RecordWith(d, func(d audit.Decision) error {
		if r.store == nil {
			return nil
		}
		return r.store.AppendDecision(ctx, d)
	})
}

// decisionResulter records the result of the run a decision allowed (a
// Store is one).
type decisionResulter interface {
	// SetDecisionResult; see Store.SetDecisionResult.
	SetDecisionResult(ctx context.Context, id, result string) error
}

// SetResult records what happened to the run the decision d allowed:
// succeeded, or the class it failed under (ResultOf of the run's failure
// class), so that the audit answers what happened, not only what was
// allowed. Like every record it holds no value: the result is one of
// RunResults, checked here. An offline recorder, or a store that keeps no
// results, stores nothing. It returns d with Result set.
func (r *Recorder) SetResult(ctx context.Context, d audit.Decision, failure string) (audit.Decision, error) {
	d.Result = health.ResultOf(failure)
	if err := CheckAudit(d); err != nil {
		return d, err
	}
	if s, ok := r.store.(decisionResulter); ok {
		return d, s.SetDecisionResult(ctx, d.ID, d.Result)
	}
	return d, nil
}

// commitRun commits rr, what a run left (RunRecord), through write — a
// store call that commits it in one transaction (Store.RecordRun) — after
// checking each of its records against the audit rule again (CheckAudit:
// they were built before the run, their Result set after it) and its
// results (RunRecord.CheckResults); its records are counted once write
// succeeded. An offline recorder writes nothing.
func (r *Recorder) commitRun(rr RunRecord, write func(RunRecord) error) error {
	for _, d := range rr.Decisions {
		if err := CheckAudit(d); err != nil {
			return err
		}
	}
	if err := rr.CheckResults(); err != nil {
		return err
	}
	if r.store != nil {
		if err := write(rr); err != nil {
			return err
		}
	}
	if r.counter != nil {
		for _, d := range rr.Decisions {
			r.counter.CountDecision(d)
		}
	}
	return nil
}

// RecordWith builds d (Build), hands it to write — a store call that
// commits the record together with the change it authorises (a grant, a
// promote) — and counts it once write succeeded. It returns the record;
// write's error is returned as it is.
func (r *Recorder) RecordWith(d audit.Decision, write func(audit.Decision) error) (audit.Decision, error) {
	d, err := r.Build(d)
	if err != nil {
		return audit.Decision{}, err
	}
	if err := write(d); err != nil {
		return audit.Decision{}, err
	}
	if r.counter != nil {
		r.counter.CountDecision(d)
	}
	return d, nil
}

// RecordMany is RecordWith for a write that decides its records inside its
// own transaction (a revoke records one per policy it finds there): write
// is handed build, which builds each of the records it decided on (Build)
// and returns them for write to commit with its change. The records of
// build's last call are counted once write succeeded, and returned.
func (r *Recorder) RecordMany(write func(build func([]audit.Decision) ([]audit.Decision, error)) error) ([]audit.Decision, error) {
	var built []audit.Decision
	build := func(ds []audit.Decision) ([]audit.Decision, error) {
		built = make([]audit.Decision, 0, len(ds))
		for _, d := range ds {
			b, err := r.Build(d)
			if err != nil {
				return nil, err
			}
			built = append(built, b)
		}
		return built, nil
	}
	if err := write(build); err != nil {
		return nil, err
	}
	if r.counter != nil {
		for _, d := range built {
			r.counter.CountDecision(d)
		}
	}
	return built, nil
}
