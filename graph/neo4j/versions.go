package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
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
			return nil, fault.Errorf(fault.CodeNotFound, "no version %q of procedure %q", codeHash, name)
		}
		current, _ := field(recs[0], "current").(string)
		v, err := decodeVersion(field(recs[0], "version"), current)
		if err != nil {
			return nil, err
		}
		return &v, nil
	})
}

// Promote makes the version codeHash current and appends d, in one
// statement (promote.cypher) that locks the procedure, checks the version
// and d's id, and writes only then.
func (s *Store) Promote(ctx context.Context, name, codeHash string, d audit.Decision) (*procedures.Procedure, error) {
	params, err := decisionParams(d)
	if err != nil {
		return nil, err
	}
	params["name"], params["hash"] = name, codeHash
	recs, err := query(ctx, s, "promote", neo4j.AccessModeWrite, "promote", params)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, notFound(name)
	}
	status, _ := field(recs[0], "status").(string)
	switch procedures.Status(status) {
	case "":
		return nil, fault.Errorf(fault.CodeNotFound, "no version %q of procedure %q", codeHash, name)
	case procedures.StatusSucceeded:
	default:
		return nil, fault.Errorf(fault.CodeConflict, "version %q of procedure %q did not succeed", codeHash, name).
			WithDetails("reason", audit.ReasonProcedureNotSucceeded)
	}
	if err := appended(recs[0], params); err != nil {
		return nil, err
	}
	p, err := s.decodeProcedure(field(recs[0], "procedure"))
	return p, s.mapError("promote", err)
}
