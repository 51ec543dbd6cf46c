package neo4j

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// SetRetired stores r as the procedure's retirement (nil brings it back),
// moving it to its class, reclassifies its callers, and appends d, in one
// write transaction (retire_set.cypher) holding the catalogue lock.
func (s *Store) SetRetired(ctx context.Context, name string, r *procedures.Retirement, d audit.Decision) (*procedures.Procedure, error) {
	dp, err := decisionParams(d)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"name": name, "at": nil, "by": nil, "reason": nil}
	if r != nil {
		params["at"], params["by"], params["reason"] = dbTime(r.RetiredAt), r.RetiredBy, r.Reason
	}
	return writeTx(ctx, s, "set retired", func(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Procedure, error) {
		// Classifications change one transaction at a time (see reclassify).
		if err := lockCatalogue(ctx, tx); err != nil {
			return nil, err
		}
		recs, err := collect(ctx, tx, "retire_set", params)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound(name)
		}
		// Its callers' classification follows (ReasonCallsRetired).
		affected, err := procedures.Affected(txClasses{ctx, tx}, []string{name})
		if err != nil {
			return nil, err
		}
		if err := reclassify(ctx, tx, affected); err != nil {
			return nil, err
		}
		if err := exec(ctx, tx, "auth_bump", nil); err != nil {
			return nil, err
		}
		if err := appendDecision(ctx, tx, dp); err != nil {
			return nil, err
		}
		return s.getInTx(ctx, tx, name)
	})
}

// LiftDemotion lifts the procedure's demotion, starts its current
// version's demotion streak again and appends in.Decision, in one write
// transaction (demotion_lift.cypher), when the procedure is demoted and
// in's version and catalogue revision, when set, are still current (see
// procedures.Store). A revision is checked under the catalogue's lock.
func (s *Store) LiftDemotion(ctx context.Context, in procedures.LiftInput) (*procedures.Procedure, error) {
	dp, err := decisionParams(in.Decision)
	if err != nil {
		return nil, err
	}
	reset := health.StreakReset()
	params := map[string]any{"name": in.Name, "hash": nil,
		"health": map[string]any{"keep": reset.Keep, "add": reset.Add, "floor": reset.Floor}}
	if in.CodeHash != "" {
		params["hash"] = in.CodeHash
	}
	return writeTx(ctx, s, "lift demotion", func(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Procedure, error) {
		if in.Revision != "" {
			if err := lockCatalogue(ctx, tx); err != nil {
				return nil, err
			}
			cat, err := catalogueIn(ctx, tx)
			if err != nil {
				return nil, err
			}
			if !sameCatalogue(cat, in.Revision) {
				return nil, procedures.LiftOutdated(in.Name)
			}
		}
		recs, err := collect(ctx, tx, "demotion_lift", params)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound(in.Name)
		}
		switch {
		case field(recs[0], "demoted") != true:
			return nil, procedures.NotDemoted(in.Name)
		case field(recs[0], "current") != true:
			return nil, procedures.LiftOutdated(in.Name)
		}
		if err := exec(ctx, tx, "auth_bump", nil); err != nil {
			return nil, err
		}
		if err := appendDecision(ctx, tx, dp); err != nil {
			return nil, err
		}
		return s.getInTx(ctx, tx, in.Name)
	})
}

// SetGrant stores g as the procedure's grant, bound to expectHash (nil
// removes it), and appends d, in one statement (grant.cypher) that locks the
// procedure, checks that cat (when set) is the stored catalogue, that
// expectHash is still current and that d's id is free (or holds d), and
// writes only then.
func (s *Store) SetGrant(ctx context.Context, name string, g *procedures.Grant, expectHash string, cat *procedures.Catalogue, d audit.Decision) (*procedures.Procedure, error) {
	params, err := decisionParams(d)
	if err != nil {
		return nil, err
	}
	params["name"], params["expectHash"], params["grant"] = name, expectHash, nil
	params["catalogue"] = catalogueParam(cat)
	if g != nil {
		params["grant"] = map[string]any{
			"enabled":   g.Enabled,
			"grantedBy": g.GrantedBy,
			"grantedAt": dbTimeOrNil(g.GrantedAt),
			"reason":    g.Reason,
			"binding":   nil,
		}
		b, err := encodeBinding(g.Binding)
		if err != nil {
			return nil, err
		}
		params["grant"].(map[string]any)["binding"] = b
	}
	recs, err := query(ctx, s, "set grant", neo4j.AccessModeWrite, "grant", params)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, notFound(name)
	}
	if field(recs[0], "sameCatalogue") != true {
		return nil, procedures.CatalogueChanged()
	}
	if field(recs[0], "ok") != true {
		return nil, fault.Errorf(fault.CodeConflict, "the current code of procedure %q is no longer %q", name, expectHash).
			WithDetails("reason", audit.ReasonCodeChanged)
	}
	if err := appended(recs[0], params); err != nil {
		return nil, err
	}
	p, err := s.decodeProcedure(field(recs[0], "procedure"))
	return p, s.mapError("set grant", err)
}

// Granted returns the procedures whose stored grant is Held, by name:
// granted.cypher reads the procedures with a grant through the
// procedure_grant index, and procedures.Grant.Held keeps the held ones.
func (s *Store) Granted(ctx context.Context) ([]*procedures.Procedure, error) {
	recs, err := query(ctx, s, "granted", neo4j.AccessModeRead, "granted", nil)
	if err != nil {
		return nil, err
	}
	ps, err := s.decodeProcedures(recs)
	if err != nil {
		return nil, s.mapError("granted", err)
	}
	return slices.DeleteFunc(ps, func(p *procedures.Procedure) bool { return !p.Grant.Held() }), nil
}

// appended checks the decision_append fragment's answer in rec:
// CodeConflict when another record holds the id (the statement then wrote
// nothing).
func appended(rec *neo4j.Record, params map[string]any) error {
	created, _ := field(rec, "created").(bool)
	same, _ := field(rec, "same").(bool)
	if !created && !same {
		return fault.Errorf(fault.CodeConflict, "decision %s already exists", params["id"])
	}
	return nil
}

// encodeBinding is a grant's binding as its grant_binding property: its
// JSON, or nil (no property) for a grant without one.
func encodeBinding(b *binding.Binding) (any, error) {
	if b == nil {
		return nil, nil
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "the grant's binding cannot be stored: %v", err)
	}
	return string(raw), nil
}

// decodeBinding reads a grant_binding property.
func decodeBinding(s string) (*binding.Binding, error) {
	b := new(binding.Binding)
	if err := json.Unmarshal([]byte(s), b); err != nil {
		return nil, fault.Errorf(fault.CodeInternal, "a stored grant binding does not decode: %v", err)
	}
	return b, nil
}
