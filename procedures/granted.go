package procedures

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/cache"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/signature"
)

// GrantIndexTTL is how long GrantedProgramOf trusts what it read of a
// procedure when nothing this service published says it changed: a
// grant revoked, a version promoted, on another instance is seen here
// within it (as auth.SyncEvery for tokens; ADR 0048). It is the one bound
// of how stale another instance's change to an authorization may be seen:
// the gate's index of session policies trusts what it read for it too
// (ADR 0050).
const GrantIndexTTL = time.Second

// maxGrantIndex bounds the procedures the grant index keeps.
const maxGrantIndex = 1024

// GrantedProgram is a procedure whose durable grant is active, as a turn's
// cover by it reads it (GrantedProgramOf): the procedure, classified under
// one catalogue, and its current version's lifted program under it.
type GrantedProgram struct {
	Procedure *Procedure
	Program   LiftedProgram
	schema    *jsonschema.Schema
}

// Admits reports whether args, values by the procedure's parameter names,
// satisfy its input schema as a proc__ call's must, carried as JSON
// (false when it has none that compiles).
func (g *GrantedProgram) Admits(args map[string]any) bool {
	if g.schema == nil {
		return false
	}
	x, err := jsonvalue.Numbers(args)
	return err == nil && g.schema.Validate(x) == nil
}

// grantIndex is what GrantedProgramOf read of each procedure it was asked
// for (an active grant's GrantedProgram, or none), kept until a change
// this service publishes concerns the procedure (every change does for
// the catalogue, another instance's or lost changes), until the
// catalogue revision differs, or for GrantIndexTTL. It takes the feed's
// changes synchronously, before each look (sub), so a write this service
// made is seen by the next turn.
type grantIndex struct {
	feed *changes.Feed
	sub  *changes.Subscription
	mu   sync.Mutex
	// global is the Seq of the last change concerning every procedure.
	global  uint64
	entries *cache.Cache[string, grantEntry]
}

// grantEntry is one procedure's entry: read after the feed's Seq was seq
// (a tombstone: changed by the change seq), at at, under catalogue
// revision rev; gp nil when it has no active grant.
type grantEntry struct {
	seq  uint64
	at   time.Time
	rev  string
	gp   *GrantedProgram
	tomb bool
}

func newGrantIndex(f *changes.Feed) *grantIndex {
	return &grantIndex{feed: f, sub: f.Subscribe(changes.DefaultFeedBuffer), entries: cache.New[string, grantEntry](maxGrantIndex)}
}

// drain takes the changes published since the last look (mu held): a
// change of a procedure leaves a tombstone, unless it is a capture that
// counted the current version of a granted one (nothing its grant
// depends on changed); any other change without a procedure but an
// approval concerns every procedure.
func (x *grantIndex) drain() {
	for _, c := range x.sub.Take() {
		switch {
		case c.Kind == changes.ChangeApproval:
		case c.Procedure == "":
			x.global = c.Seq
		default:
			if e, ok := x.entries.Get(c.Procedure); ok && c.Kind == changes.ChangeCapture && e.gp != nil && !e.tomb && e.gp.Procedure.CodeHash == c.CodeHash {
				continue
			}
			x.entries.Add(c.Procedure, grantEntry{seq: c.Seq, tomb: true})
		}
	}
}

// GrantedProgramOf returns the procedure of sig (by each name a capture
// may have given it: signature.Names, ProcedureName, HashedName) with its
// active grant and its current version's lifted program, both under cat
// (the catalogue the turn was classified with), or nil when it has none,
// does not exist or was classified under another catalogue. The grant
// cover's reads of the store (docs/design.md "What an authorization binds
// to"): from the index without a store round trip while nothing said a
// name's procedure changed (grantIndex), else one read per name, kept.
// Errors are the store's.
func (s *Service) GrantedProgramOf(ctx context.Context, sig []string, cat *Catalogue) (*GrantedProgram, error) {
	if cat == nil || len(sig) == 0 {
		return nil, nil
	}
	names := append(signature.Names(sig, nil), signature.Names(sig, cat.Has)...)
	names = append(names, signature.ProcedureName(sig), signature.HashedName(sig))
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		gp, err := s.grantedNamed(ctx, name, cat)
		if err != nil {
			return nil, err
		}
		if gp != nil && slices.Equal(gp.Procedure.Signature, sig) {
			return gp, nil
		}
	}
	return nil, nil
}

// grantedNamed is GrantedProgramOf for the procedure named name.
func (s *Service) grantedNamed(ctx context.Context, name string, cat *Catalogue) (*GrantedProgram, error) {
	if cat.Revision == "" {
		return s.readGranted(ctx, name, cat) // nothing to key an entry by
	}
	x := s.grants
	now := s.opts.Now()
	x.mu.Lock()
	x.drain()
	if e, ok := x.entries.Get(name); ok && !e.tomb && e.seq >= x.global && e.rev == cat.Revision && !now.Before(e.at) && now.Sub(e.at) < GrantIndexTTL {
		x.mu.Unlock()
		return e.gp, nil
	}
	seq := x.feed.Seq()
	x.mu.Unlock()

	gp, err := s.readGranted(ctx, name, cat)
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drain()
	if cur, ok := x.entries.Get(name); seq >= x.global && !(ok && cur.seq > seq) {
		x.entries.Add(name, grantEntry{seq: seq, at: now, rev: cat.Revision, gp: gp})
	}
	return gp, nil
}

// readGranted reads name for GrantedProgramOf: nil when it does not exist,
// has no active grant, or was classified under another catalogue than cat.
func (s *Service) readGranted(ctx context.Context, name string, cat *Catalogue) (*GrantedProgram, error) {
	p, v, err := s.load(ctx, name)
	if fault.ErrorCode(err) == fault.CodeNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !p.AutoRun.Active || v.cat == nil || v.cat.Revision != cat.Revision {
		return nil, nil
	}
	gp := &GrantedProgram{Procedure: p, Program: s.LiftedProgramOf(p.Code, p.Dialect, cat)}
	if p.InputSchema != nil {
		gp.schema, _ = schemas.CompileSchema(p.InputSchema)
	}
	return gp, nil
}
