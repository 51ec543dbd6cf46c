package neo4jstore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// SetRetired stores r as the procedure's retirement (nil brings it back),
// moving it to its class, and appends d, in one write transaction
// (retire_set.cypher).
func (s *Store) SetRetired(ctx context.Context, name string, r *procedures.Retirement, d procedures.Decision) (*procedures.Procedure, error) {
	dp, err := decisionParams(d)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"name": name, "at": nil, "by": nil, "reason": nil}
	if r != nil {
		params["at"], params["by"], params["reason"] = dbTime(r.RetiredAt), r.RetiredBy, r.Reason
	}
	return writeTx(ctx, s, "set retired", func(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Procedure, error) {
		recs, err := collect(ctx, tx, "retire_set", params)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound(name)
		}
		if err := appendDecision(ctx, tx, dp); err != nil {
			return nil, err
		}
		return getInTx(ctx, tx, name)
	})
}

// SetGrant stores g as the procedure's grant, bound to expectHash (nil
// removes it), and appends d, in one write transaction that first locks the
// procedure and checks that expectHash is still current.
func (s *Store) SetGrant(ctx context.Context, name string, g *procedures.Grant, expectHash string, d procedures.Decision) (*procedures.Procedure, error) {
	dp, err := decisionParams(d)
	if err != nil {
		return nil, err
	}
	query, params := "grant_remove", map[string]any{"name": name}
	if g != nil {
		query = "grant_set"
		params = map[string]any{
			"name":      name,
			"enabled":   g.Enabled,
			"grantedBy": g.GrantedBy,
			"grantedAt": dbTimeOrNil(g.GrantedAt),
			"reason":    g.Reason,
			"codeHash":  expectHash,
		}
	}
	return writeTx(ctx, s, "set grant", func(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Procedure, error) {
		current, _, err := lockProcedure(ctx, tx, name, expectHash)
		if err != nil {
			return nil, err
		}
		if current != expectHash {
			return nil, procedures.Errorf(procedures.CodeConflict, "the current code of procedure %q is no longer %q", name, expectHash).
				WithDetails("reason", procedures.ReasonCodeChanged)
		}
		if err := exec(ctx, tx, query, params); err != nil {
			return nil, err
		}
		if err := appendDecision(ctx, tx, dp); err != nil {
			return nil, err
		}
		return getInTx(ctx, tx, name)
	})
}
