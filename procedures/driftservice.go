package procedures

import (
	"context"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
)

// setDrift sets v's Drift and Stale under cat (DriftOf its Baseline).
func (v *Version) setDrift(cat *Catalogue) {
	v.Drift = DriftOf(v.Baseline, cat)
	v.Stale = len(v.Drift) > 0
}

// VersionView returns one version with its code and its drift under the
// current catalogue (what GET …/versions/{code_hash} shows; Version is the
// version as stored). Returns fault.CodeNotFound.
func (s *Service) VersionView(ctx context.Context, name, codeHash string) (*Version, error) {
	v, err := s.store.Version(ctx, name, codeHash)
	if err != nil {
		return nil, err
	}
	cat, err := s.store.Catalogue(ctx)
	if err != nil {
		return nil, err
	}
	v.setDrift(cat)
	return v, nil
}

// DriftPage is a page of GET /v1/drift.
type DriftPage struct {
	Versions []DriftEntry `json:"versions"`
	Total    int          `json:"total"`
}

// Drifted returns the page [offset, offset+limit) of the stale versions
// under the current catalogue, current ones first (Store.Drifted), each
// with what changed. Returns fault.CodeInvalid for a limit outside 1 to
// fields.MaxDriftPage or a negative offset.
func (s *Service) Drifted(ctx context.Context, limit, offset int) (*DriftPage, error) {
	if limit < 1 || limit > fields.MaxDriftPage {
		return nil, fault.Errorf(fault.CodeInvalid, "limit must be between 1 and %d", fields.MaxDriftPage).WithDetails("field", "limit")
	}
	if offset < 0 {
		return nil, fault.Errorf(fault.CodeInvalid, "offset must not be negative").WithDetails("field", "offset")
	}
	cat, err := s.store.Catalogue(ctx)
	if err != nil {
		return nil, err
	}
	vs, total, err := s.store.Drifted(ctx, limit, offset)
	if err != nil {
		return nil, err
	}
	out := &DriftPage{Versions: make([]DriftEntry, 0, len(vs)), Total: total}
	for _, v := range vs {
		out.Versions = append(out.Versions, DriftEntry{Procedure: v.Procedure, CodeHash: v.CodeHash, Current: v.Current,
			Drift: DriftOf(v.Baseline, cat), Verification: v.Verification})
	}
	return out, nil
}

// StaleVersions returns every stale version under the current catalogue,
// current ones first, in one read (Store.Drifted without a page): the
// background verifier's list.
func (s *Service) StaleVersions(ctx context.Context) ([]StaleVersion, error) {
	vs, _, err := s.store.Drifted(ctx, 0, 0)
	return vs, err
}

// AcceptDriftRequest is an operator accepting a stale version's drift.
type AcceptDriftRequest struct {
	Name     string
	CodeHash string
	Reason   string
	Actor    string
}

// AcceptDrift gives a stale version the current contracts as its baseline,
// audited with one decision of kind drift (reason drift_accepted, the
// operator's reason as its note) in the same transaction; it clears stale
// and drift, and changes no authorization (those stay bound to the hashes
// they were given under: re-grant to bind anew). It returns the procedure
// as it now is. Returns fault.CodeNotFound for an unknown procedure or
// version, fault.CodeConflict (reason not_stale) when the version is not
// stale, fault.CodeInvalid.
func (s *Service) AcceptDrift(ctx context.Context, r AcceptDriftRequest) (*Procedure, audit.Decision, error) {
	if len(r.Reason) > fields.MaxReasonBytes {
		return nil, audit.Decision{}, fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", fields.MaxReasonBytes).WithDetails("field", "reason")
	}
	p, view, err := s.load(ctx, r.Name)
	if err != nil {
		return nil, audit.Decision{}, err
	}
	if err := checkVersionHash(r.Name, r.CodeHash); err != nil {
		return nil, audit.Decision{}, err
	}
	d := audit.Decision{Kind: audit.KindDrift, Procedure: p.Name, CodeHash: r.CodeHash, Outcome: audit.Allowed, Reason: audit.ReasonDriftAccepted,
		Actor: r.Actor, Note: strings.TrimSpace(r.Reason)}
	var v *Version
	rec, err := s.rec.RecordWith(d, func(d audit.Decision) error {
		var err error
		v, err = s.store.Rebaseline(ctx, RebaselineInput{Name: p.Name, CodeHash: r.CodeHash, Decision: &d})
		return err
	})
	if err != nil {
		return nil, audit.Decision{}, err
	}
	if v.CodeHash == p.CodeHash {
		p.Baseline = v.Baseline
		view.decorate(p)
	}
	s.feed.Publish(changes.Change{Kind: changes.ChangeDrift, Procedure: p.Name, CodeHash: r.CodeHash, Decision: rec.ID})
	return p, rec, nil
}

// ClearDrift gives the version codeHash of name the current contracts as
// its baseline after a run of it succeeded under the catalogue revision
// (Procedure.DriftRevision): nothing changes when the catalogue changed
// since. Callers call it only for a stale version.
func (s *Service) ClearDrift(ctx context.Context, name, codeHash, revision string) error {
	if revision == "" {
		return fault.Errorf(fault.CodeInvalid, "clearing drift needs the catalogue revision the run saw")
	}
	v, err := s.store.Rebaseline(ctx, RebaselineInput{Name: name, CodeHash: codeHash, Revision: revision})
	if err != nil {
		return err
	}
	if cat, err := s.store.Catalogue(ctx); err == nil {
		if v.setDrift(cat); !v.Stale {
			s.feed.Publish(changes.Change{Kind: changes.ChangeDrift, Procedure: name, CodeHash: codeHash})
		}
	}
	return nil
}
