package neo4jstore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// Versions returns a procedure's versions, oldest first (captured_at, then
// code hash), with Current set on the current one.
func (s *Store) Versions(ctx context.Context, name string) ([]procedures.Version, error) {
	return readTx(ctx, s, "versions", func(ctx context.Context, tx neo4j.ManagedTransaction) ([]procedures.Version, error) {
		recs, err := collect(ctx, tx, "versions", map[string]any{"name": name})
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound(name)
		}
		current, _ := field(recs[0], "current").(string)
		list, _ := field(recs[0], "versions").([]any)
		out := make([]procedures.Version, 0, len(list))
		for _, v := range list {
			ver, err := decodeVersion(v, current)
			if err != nil {
				return nil, err
			}
			out = append(out, ver)
		}
		return out, nil
	})
}

// Version returns one version of a procedure, with its code.
func (s *Store) Version(ctx context.Context, name, codeHash string) (*procedures.Version, error) {
	return readTx(ctx, s, "version", func(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Version, error) {
		recs, err := collect(ctx, tx, "version", map[string]any{"name": name, "hash": codeHash})
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, procedures.Errorf(procedures.CodeNotFound, "no version %q of procedure %q", codeHash, name)
		}
		current, _ := field(recs[0], "current").(string)
		v, err := decodeVersion(field(recs[0], "version"), current)
		if err != nil {
			return nil, err
		}
		return &v, nil
	})
}

// Promote makes the version codeHash current and appends d, in one write
// transaction that first locks the procedure (lock_procedure.cypher).
func (s *Store) Promote(ctx context.Context, name, codeHash string, d procedures.Decision) (*procedures.Procedure, error) {
	dp, err := decisionParams(d)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"name": name, "hash": codeHash}
	return writeTx(ctx, s, "promote", func(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Procedure, error) {
		_, status, err := lockProcedure(ctx, tx, name, codeHash)
		if err != nil {
			return nil, err
		}
		switch status {
		case "":
			return nil, procedures.Errorf(procedures.CodeNotFound, "no version %q of procedure %q", codeHash, name)
		case procedures.StatusSucceeded:
		default:
			return nil, procedures.Errorf(procedures.CodeConflict, "version %q of procedure %q did not succeed", codeHash, name).
				WithDetails("reason", procedures.ReasonProcedureNotSucceeded)
		}
		if err := exec(ctx, tx, "promote", params); err != nil {
			return nil, err
		}
		if err := appendDecision(ctx, tx, dp); err != nil {
			return nil, err
		}
		return getInTx(ctx, tx, name)
	})
}

// lockProcedure takes the write lock on the procedure name for the rest of
// tx and returns its current code hash and the status of its version hash
// ("" when there is no such version). CodeNotFound when name does not exist.
func lockProcedure(ctx context.Context, tx neo4j.ManagedTransaction, name, hash string) (current string, status procedures.Status, err error) {
	recs, err := collect(ctx, tx, "lock_procedure", map[string]any{"name": name, "hash": hash})
	if err != nil {
		return "", "", err
	}
	if len(recs) == 0 {
		return "", "", notFound(name)
	}
	current, _ = field(recs[0], "current").(string)
	st, _ := field(recs[0], "status").(string)
	return current, procedures.Status(st), nil
}
