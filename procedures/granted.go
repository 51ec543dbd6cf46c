package procedures

import (
	"context"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/signature"
)

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

// GrantedProgramOf returns the procedure of sig (by each name a capture
// may have given it: signature.Names, ProcedureName, HashedName) with its
// active grant and its current version's lifted program, both under cat
// (the catalogue the turn was classified with), or nil when it has none,
// does not exist or was classified under another catalogue. The grant
// cover's reads of the store (docs/design.md "What an authorization binds
// to"): from the authorization cache without a store round trip while it
// trusts what it read of each name (authcache.go), else one read per name,
// kept.
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

// grantedNamed is GrantedProgramOf for the procedure named name: from the
// authorization cache while it trusts its look (authcache.go), else read
// and kept.
func (s *Service) grantedNamed(ctx context.Context, name string, cat *Catalogue) (*GrantedProgram, error) {
	if cat.Revision == "" {
		return s.readGranted(ctx, name, cat) // nothing to key an entry by
	}
	gp, found, seq, epoch := s.auth.granted(name, cat.Revision, s.opts.Now())
	if found {
		return gp, nil
	}
	gp, err := s.readGranted(ctx, name, cat)
	if err != nil {
		return nil, err
	}
	s.auth.keep(name, cat.Revision, gp, seq, epoch)
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
