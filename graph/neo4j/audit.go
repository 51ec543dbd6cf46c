package neo4j

import (
	"context"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
)

// The audit log's page sizes: procedures'.
const (
	defaultDecisionLimit = audit.DefaultDecisionLimit
	maxDecisionLimit     = audit.MaxDecisionLimit
)

// AppendDecision appends an audit record (decision_append.cypher). The same
// record again is a no-op; another record under a known id is CodeConflict.
func (s *Store) AppendDecision(ctx context.Context, d audit.Decision) error {
	params, err := decisionParams(d)
	if err != nil {
		return err
	}
	recs, err := query(ctx, s, "append decision", neo4j.AccessModeWrite, "decision_append", params)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return s.mapError("append decision", errRows("decision_append", len(recs)))
	}
	return appended(recs[0], params)
}

// decisionParams validates d and returns the parameters of decision_append.cypher.
func decisionParams(d audit.Decision) (map[string]any, error) {
	switch {
	case d.ID == "":
		return nil, invalid("id", "a decision needs an id")
	case !d.Kind.Valid():
		return nil, invalid("kind", "decision kind %q is not one of invoke, grant, revoke, promote, catalogue", d.Kind)
	case d.At.IsZero():
		return nil, invalid("at", "a decision needs a time")
	}
	var allowed any // null stays null (no property: a nil slice would be sent as []), [] stays []
	if d.AllowedTools != nil {
		allowed = d.AllowedTools
	}
	return map[string]any{
		"id":           d.ID,
		"kind":         string(d.Kind),
		"procedure":    d.Procedure,
		"codeHash":     d.CodeHash,
		"phase":        string(d.Phase),
		"outcome":      string(d.Outcome),
		"reason":       d.Reason,
		"actor":        d.Actor,
		"allowedTools": allowed,
		"at":           dbTime(d.At),
		"note":         d.Note,
		"suggestion":   d.Suggestion,
		"session":      d.Session,
		"result":       nilIfEmpty(d.Result),
	}, nil
}

// SetDecisionResult records result as the result of the run the decision
// id allowed (decision_result.cypher; see procedures.Store).
func (s *Store) SetDecisionResult(ctx context.Context, id, result string) error {
	if !slices.Contains(health.RunResults, result) {
		return invalid("result", "result %q is not a run's result", result)
	}
	recs, err := query(ctx, s, "set decision result", neo4j.AccessModeWrite, "decision_result", map[string]any{"id": id, "result": result})
	if err != nil {
		return err
	}
	if err := resultSet(recs, id, result); err != nil {
		return s.mapError("set decision result", err)
	}
	return nil
}

// resultSet reads decision_result.cypher's answer for id: nil when the
// record holds result, CodeNotFound for an unknown id, CodeConflict for
// another result.
func resultSet(recs []*neo4j.Record, id, result string) error {
	if len(recs) != 1 {
		return errRows("decision_result", len(recs))
	}
	r := &row{m: recs[0].AsMap()}
	found, got := r.bool("found"), r.str("result")
	switch {
	case r.err != nil:
		return r.err
	case !found:
		return fault.Errorf(fault.CodeNotFound, "no decision %s", id)
	case got != result:
		return fault.Errorf(fault.CodeConflict, "decision %s already has the result %s", id, got)
	}
	return nil
}

// ListDecisions returns audit records matching f, newest first (time, then
// id). Limit 0 means 100; above 1000 is clamped to 1000.
func (s *Store) ListDecisions(ctx context.Context, f audit.DecisionFilter) ([]audit.Decision, error) {
	switch {
	case f.Limit < 0:
		return nil, invalid("limit", "limit must not be negative")
	case f.Kind != "" && !f.Kind.Valid():
		return nil, invalid("kind", "decision kind %q is not one of invoke, grant, revoke, promote, catalogue", f.Kind)
	}
	limit := f.Limit
	if limit == 0 {
		limit = defaultDecisionLimit
	}
	limit = min(limit, maxDecisionLimit)
	return readTx(ctx, s, "list decisions", func(ctx context.Context, tx neo4j.ManagedTransaction) ([]audit.Decision, error) {
		params := map[string]any{"procedure": nilIfEmpty(f.Procedure), "kind": nilIfEmpty(string(f.Kind)), "limit": limit,
			"actor": nilIfEmpty(f.Actor), "outcome": nilIfEmpty(string(f.Outcome)), "since": dbTimeOrNil(f.Since), "until": dbTimeOrNil(f.Until),
			"beforeId": nil, "beforeAt": nil}
		if f.Before != "" {
			recs, err := collect(ctx, tx, "decision_at", map[string]any{"id": f.Before})
			if err != nil {
				return nil, err
			}
			if len(recs) != 1 {
				return nil, invalid("before", "before %q is not a decision id", f.Before)
			}
			params["beforeId"], params["beforeAt"] = f.Before, field(recs[0], "at")
		}
		stmt := "decisions" // the time index, newest first
		if f.Procedure != "" {
			stmt = "decisions_procedure" // the procedure's records by time
		}
		recs, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return nil, err
		}
		out := make([]audit.Decision, 0, len(recs))
		for _, rec := range recs {
			d, err := decodeDecision(field(rec, "decision"))
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		return out, nil
	})
}

// appendDecision runs decision_append.cypher inside tx (a write that
// audits itself in its own transaction): CodeConflict, which rolls tx back,
// for another record under the same id.
func appendDecision(ctx context.Context, tx neo4j.ManagedTransaction, params map[string]any) error {
	recs, err := collect(ctx, tx, "decision_append", params)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return errRows("decision_append", len(recs))
	}
	return appended(recs[0], params)
}

// decodeDecision reads an audit record map (decisions.cypher's decision).
func decodeDecision(v any) (audit.Decision, error) {
	r := &row{m: asMap(v)}
	d := audit.Decision{
		ID:           r.str("id"),
		Kind:         audit.DecisionKind(r.str("kind")),
		Procedure:    r.str("procedure"),
		CodeHash:     r.str("code_hash"),
		Phase:        audit.Phase(r.str("phase")),
		Outcome:      audit.Outcome(r.str("outcome")),
		Reason:       r.str("reason"),
		Actor:        r.str("actor"),
		AllowedTools: r.strings("allowed_tools"),
		At:           r.time("at"),
		Note:         r.str("note"),
		Suggestion:   r.str("suggestion"),
		Session:      r.str("session"),
		Result:       r.str("result"),
	}
	return d, r.err
}
