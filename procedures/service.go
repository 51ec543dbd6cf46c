package procedures

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/recording"
)

// Options configure a Service.
type Options struct {
	// AllowMutatingAutorun exposes state-changing procedures and lets them be
	// granted durable auto-run (interactive phase only).
	AllowMutatingAutorun bool
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// Counter counts every decision the service's Recorder stores
	// (metrics.Registry is one); optional.
	Counter decisionCounter
	// MaxConcurrentSearches bounds the relevance searches (Find with Q)
	// running at once; twice the number of CPUs when 0
	// (defaultMaxConcurrentSearches).
	MaxConcurrentSearches int
	// DemoteAfter is the number of consecutive failures of a procedure's
	// current version that demote it (DemotedAfter); 0 never demotes.
	// --demote-after; cmd/procgraph sets DefaultDemoteAfter.
	DemoteAfter int
}

// Service applies procgraph's rules on top of a Store: capture, find,
// auto-run grants, promotion, the catalogue and the audit log. It derives
// every classification from the current catalogue at read time.
type Service struct {
	store Store
	opts  Options
	rec   *Recorder
	feed  *changes.Feed
	flows *flowCache
	decor *decorations
	lifts *liftCache
	memos *liftMemos
	// analyses keep captures' analyses of their code (captureAnalyses).
	analyses *captureAnalyses
	// auth is the authorization cache: what was read or written last of
	// each procedure, and what a grant's cover found for it (authcache.go).
	auth *authCache
	// held is the catalogue read last (heldCatalogue).
	held atomic.Pointer[Catalogue]
	// searches holds a token per relevance search running (HoldSearch).
	searches chan struct{}
	// catalogueMu serialises the catalogue's writes (PutCatalogue,
	// RefreshCatalogue): a refresh reads, merges and writes under it.
	catalogueMu sync.Mutex
}

// NewService returns a Service over store.
func NewService(store Store, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxConcurrentSearches <= 0 {
		opts.MaxConcurrentSearches = defaultMaxConcurrentSearches()
	}
	feed := changes.NewFeed()
	return &Service{store: store, opts: opts, rec: NewRecorder(store, RecorderOptions{Counter: opts.Counter, Now: opts.Now}),
		feed: feed, flows: newFlowCache(), decor: newDecorations(), lifts: newLiftCache(), memos: newLiftMemos(), analyses: newCaptureAnalyses(), auth: newAuthCache(feed),
		searches: make(chan struct{}, opts.MaxConcurrentSearches)}
}

// Changes returns the service's change feed: a Change after every write
// that committed through this service (capture, catalogue, grant, revoke,
// promote, retire, unretire) and, while WatchRemote runs, one when
// another instance changed what is exposed.
func (s *Service) Changes() *changes.Feed { return s.feed }

// Recorder returns the recorder of every decision taken over this
// service's store: the service's own (grants, promotes, the catalogue) and
// the replays' (replay.Replayer records through it).
func (s *Service) Recorder() *Recorder { return s.rec }

// AllowMutatingAutorun reports whether mutating auto-run is on.
func (s *Service) AllowMutatingAutorun() bool { return s.opts.AllowMutatingAutorun }

func (s *Service) now() time.Time { return s.opts.Now().UTC().Truncate(time.Millisecond) }

// Now is the time the service records: Options.Now, in UTC, to the
// millisecond.
func (s *Service) Now() time.Time { return s.now() }

// Ping checks that the store answers.
func (s *Service) Ping(ctx context.Context) error { return s.store.Ping(ctx) }

// Catalogue returns the current tool catalogue.
func (s *Service) Catalogue(ctx context.Context) (*Catalogue, error) { return s.store.Catalogue(ctx) }

// PutCatalogue validates tools and replaces the catalogue with them; every
// procedure's classification follows at once. A catalogue change decides
// what may run with nobody watching (read_only), so it is audited like a
// grant: one decision record (kind catalogue, the new revision as its code
// hash, actor) is appended before the catalogue is replaced; if it cannot
// be, nothing changes. Returns fault.CodeInvalid.
func (s *Service) PutCatalogue(ctx context.Context, tools []Tool, actor string) (*Catalogue, error) {
	s.catalogueMu.Lock()
	defer s.catalogueMu.Unlock()
	c, err := NewCatalogue(tools)
	if err != nil {
		return nil, err
	}
	readOnly := len(c.ReadOnlyTools())
	d := audit.Decision{Kind: audit.KindCatalogue, CodeHash: c.Revision, Outcome: audit.Allowed, Reason: audit.ReasonCatalogueReplaced,
		Actor: actor, Note: fmt.Sprintf("%d tools, %d read-only", len(c.Tools), readOnly)}
	d, err = s.rec.Record(ctx, d)
	if err != nil {
		return nil, err
	}
	if err := s.store.PutCatalogue(ctx, c); err != nil {
		return nil, err
	}
	s.feed.Publish(changes.Change{Kind: changes.ChangeCatalogue, CodeHash: c.Revision, Decision: d.ID})
	return c, nil
}

// Get returns one procedure, classified. Returns fault.CodeNotFound.
func (s *Service) Get(ctx context.Context, name string) (*Procedure, error) {
	p, _, err := s.load(ctx, name)
	return p, err
}

// GetForRun returns one procedure, classified, and the catalogue that
// classified it: the one its run's tool calls are checked against
// (docs/design.md: arguments are checked against the tool's input_schema
// at call time). Returns fault.CodeNotFound.
func (s *Service) GetForRun(ctx context.Context, name string) (*Procedure, *Catalogue, error) {
	p, v, err := s.load(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return p, v.cat, nil
}

// load returns one procedure, classified, and the view that classified it:
// writes that follow reuse the view, so once they commit nothing more is
// read (a failure after a commit would otherwise report a write that
// happened as one that did not).
func (s *Service) load(ctx context.Context, name string) (*Procedure, *view, error) {
	if cg, ok := s.store.(CatalogueGetter); ok {
		p, cat, err := cg.GetWithCatalogue(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		s.holdCatalogue(cat)
		s.auth.remember(p)
		v, err := s.viewOf(ctx, cat, []*Procedure{p})
		if err != nil {
			return nil, nil, err
		}
		v.decorate(p)
		return p, v, nil
	}
	p, err := s.store.Get(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	s.auth.remember(p)
	v, err := s.newView(ctx, []*Procedure{p})
	if err != nil {
		return nil, nil, err
	}
	v.decorate(p)
	return p, v, nil
}

// Versions returns a procedure's versions, oldest first, each with its
// drift under the current catalogue. Returns fault.CodeNotFound.
func (s *Service) Versions(ctx context.Context, name string) ([]Version, error) {
	vs, err := s.store.Versions(ctx, name)
	if err != nil {
		return nil, err
	}
	cat, err := s.store.Catalogue(ctx)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		vs[i].setDrift(cat)
	}
	return vs, nil
}

// Version returns one version with its code. Returns fault.CodeNotFound.
func (s *Service) Version(ctx context.Context, name, codeHash string) (*Version, error) {
	return s.store.Version(ctx, name, codeHash)
}

// Causes returns every cause.
func (s *Service) Causes(ctx context.Context) ([]Cause, error) { return s.store.Causes(ctx) }

// Cause returns one cause and its procedures. Returns fault.CodeNotFound.
func (s *Service) Cause(ctx context.Context, name string) (*Cause, []CauseProcedure, error) {
	return s.store.Cause(ctx, name)
}

// Decisions returns audit records, newest first.
func (s *Service) Decisions(ctx context.Context, f audit.DecisionFilter) ([]audit.Decision, error) {
	if f.Limit < 0 {
		return nil, fault.Errorf(fault.CodeInvalid, "limit must not be negative").WithDetails("field", "limit")
	}
	if f.Kind != "" && !f.Kind.Valid() {
		return nil, fault.Errorf(fault.CodeInvalid, "kind %q is not one of %s", f.Kind, strings.Join(audit.DecisionKindNames(), ", ")).WithDetails("field", "kind")
	}
	if f.Outcome != "" && !f.Outcome.Valid() {
		return nil, fault.Errorf(fault.CodeInvalid, "outcome %q is not one of allowed, denied", f.Outcome).WithDetails("field", "outcome")
	}
	f.Since, f.Until = f.Since.Truncate(time.Millisecond), f.Until.Truncate(time.Millisecond)
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return nil, fault.Errorf(fault.CodeInvalid, "since must be before until").WithDetails("field", "since")
	}
	return s.store.ListDecisions(ctx, f)
}

// countRun counts a finished run of the version codeHash of name in its
// health (run; nil counts none): a successful one is also a replay under
// usageKey, linking cause when set; a failed one counts in the health
// only (UseInput).
func (s *Service) countRun(ctx context.Context, name, codeHash, usageKey, cause string, run *health.Run) error {
	in, ok := s.RunUse(name, codeHash, usageKey, cause, run, Kept{})
	if !ok {
		return nil
	}
	return s.recordRun(ctx, in)
}

// Kept is what a successful run keeps besides its count: its recording
// (nil: none), PerVersion of them per version (DefaultRecordingsPerVersion
// when 0).
type Kept struct {
	Recording  *recording.Recording
	PerVersion int
}

// RunUse is the use a run's commit writes (replay.Pending) for a
// finished run of the version codeHash of name (run; nil counts none in the health), keeping what k
// holds with a successful one: a successful run is a replay under
// usageKey, linking cause when set; a failed one counts in the health
// only (UseInput). It reports false when the run counts nothing: one that
// failed under a class that does not count in the health
// (CountsInHealth).
func (s *Service) RunUse(name, codeHash, usageKey, cause string, run *health.Run, k Kept) (UseInput, bool) {
	if run != nil && !health.CountsInHealth(run.Failure) {
		return UseInput{}, false
	}
	in := UseInput{Name: name, CodeHash: codeHash, UsageKey: usageKey, Cause: cause, Replay: true, At: s.now()}
	if run != nil {
		r := *run
		r.At = in.At
		in.Run = &r
		if r.Failure != "" {
			in.Replay, in.Cause = false, ""
		}
	}
	if in.Replay {
		k.keep(&in)
	}
	return in, true
}

// keep puts k's recording, if any, into in.
func (k Kept) keep(in *UseInput) {
	if k.Recording == nil {
		return
	}
	in.Recording, in.KeepRecordings = k.Recording, k.PerVersion
	if in.KeepRecordings == 0 {
		in.KeepRecordings = recording.DefaultRecordingsPerVersion
	}
}

// BlockUse is the use a turn's commit writes for a run of a block that is
// not a replay: in the health of the stored version whose code it ran
// (codeHash of name; a use of none writes nothing), keeping what k holds
// when it succeeded; false when it counts nothing (CountsInHealth).
func (s *Service) BlockUse(name, codeHash, usageKey string, run health.Run, k Kept) (UseInput, bool) {
	if !health.CountsInHealth(run.Failure) {
		return UseInput{}, false
	}
	run.At = s.now()
	in := UseInput{Name: name, CodeHash: codeHash, UsageKey: usageKey, At: run.At, Run: &run}
	if run.Failure == "" {
		k.keep(&in)
	}
	return in, true
}

// CommitRunWith commits what a run left (RunRecord) in one transaction
// through write, a store call that commits it with a change of its own (a
// turn marked done: gate.TurnStore.FinishTurn), or Store.RecordRun when
// write is nil (an empty rr is then not written; write is called even
// for an empty one). Its records are checked and counted by
// Recorder.commitRun. Then, for each use that demoted its procedure, it
// records the health decision and publishes the change, as a single use
// does (recordRun). Each use's DemoteAfter is the service's. It reports
// whether rr was committed: an error after the commit (a demotion's
// record) leaves it committed.
func (s *Service) CommitRunWith(ctx context.Context, rr RunRecord, write func(RunRecord) ([]UseResult, error)) (bool, error) {
	if write == nil {
		if rr.empty() {
			return true, nil
		}
		write = func(rr RunRecord) ([]UseResult, error) { return s.store.RecordRun(ctx, rr) }
	}
	for i := range rr.Uses {
		rr.Uses[i].DemoteAfter = s.opts.DemoteAfter
	}
	var res []UseResult
	err := s.rec.commitRun(rr, func(rr RunRecord) error {
		var err error
		res, err = write(rr)
		return err
	})
	if err != nil {
		return false, err
	}
	var errs []error
	for _, r := range res {
		errs = append(errs, s.demoted(ctx, r))
	}
	return true, errors.Join(errs...)
}

// recordRun stores the run of in under the service's DemoteAfter and,
// when it demoted the procedure, records a health decision and publishes
// the change (ChangeDemote); no run lifts a demotion (LiftDemotion). The
// record is appended after the run's write: a failure to append it is
// returned, the demotion stays.
func (s *Service) recordRun(ctx context.Context, in UseInput) error {
	in.DemoteAfter = s.opts.DemoteAfter
	res, err := s.store.RecordUse(ctx, in)
	if err != nil {
		return err
	}
	return s.demoted(ctx, res)
}

// demoted records the health decision of a use that demoted its
// procedure (res.Demotion) and publishes the change (ChangeDemote);
// nothing for any other use.
func (s *Service) demoted(ctx context.Context, res UseResult) error {
	if res.Demotion != health.DemotionDemoted || res.Procedure == nil {
		return nil
	}
	p := res.Procedure
	d := audit.Decision{Kind: audit.KindHealth, Procedure: p.Name, CodeHash: p.CodeHash, Outcome: audit.Allowed, Actor: audit.ActorProcgraph,
		Reason: audit.ReasonDemoted, Note: fmt.Sprintf("the current version failed %d times since its last success, for more than one caller (the last: %s)",
			p.Health.DemotionStreak, p.Health.LastFailureClass)}
	rec, err := s.rec.Record(ctx, d)
	s.feed.Publish(changes.Change{Kind: changes.ChangeDemote, Procedure: p.Name, CodeHash: p.CodeHash, Decision: rec.ID})
	return err
}
