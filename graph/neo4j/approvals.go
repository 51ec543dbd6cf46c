package neo4j

import (
	"context"
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
)

var _ gate.TurnStore = (*Store)(nil)

// turnParams returns the parameters that store r (purged, times at
// millisecond precision): the whole record as JSON, and the fields queries
// select on.
func turnParams(r gate.TurnRecord) (map[string]any, error) {
	r = r.Purged()
	r.RequestedAt, r.Deadline = dbTime(r.RequestedAt), dbTime(r.Deadline)
	if r.Resolution != nil {
		res := *r.Resolution
		res.At = dbTime(res.At)
		r.Resolution = &res
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "the turn cannot be stored: %v", err)
	}
	return map[string]any{"id": r.ID, "session": r.SessionID, "requestedBy": r.RequestedBy, "status": string(r.Status),
		"deadline": r.Deadline.UnixMilli(), "record": string(b)}, nil
}

func decodeTurn(v any) (*gate.TurnRecord, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fault.Errorf(fault.CodeInternal, "a stored turn is not a record")
	}
	var r gate.TurnRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fault.Errorf(fault.CodeInternal, "a stored turn does not decode: %v", err)
	}
	return &r, nil
}

// CreateApproval implements gate.TurnStore (turn_create.cypher: both
// counts and the create are one statement, under the gate node's lock).
func (s *Store) CreateApproval(ctx context.Context, r gate.TurnRecord, bounds gate.PendingBounds, now time.Time) error {
	if err := gate.CheckApproval(r); err != nil {
		return err
	}
	r.Status = gate.TurnPending
	params, err := turnParams(r)
	if err != nil {
		return err
	}
	perRequester := bounds.PerRequester
	if perRequester <= 0 {
		perRequester = bounds.Total
	}
	params["max"], params["maxMine"], params["now"] = bounds.Total, perRequester, dbTime(now).UnixMilli()
	recs, err := query(ctx, s, "create approval", neo4j.AccessModeWrite, "turn_create", params)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return s.mapError("create approval", errRows("turn_create", len(recs)))
	}
	if field(recs[0], "exists") == true {
		return fault.Errorf(fault.CodeConflict, "turn %s exists", r.ID)
	}
	left := func(name string) time.Duration {
		at, ok := field(recs[0], name).(int64)
		if !ok {
			return 0
		}
		return time.UnixMilli(at).Sub(now)
	}
	c := gate.PendingCount{TotalNext: left("next"), RequesterNext: left("mineNext")}
	pending, _ := field(recs[0], "pending").(int64)
	mine, _ := field(recs[0], "mine").(int64)
	c.Total, c.Requester = int(pending), int(mine)
	if field(recs[0], "created") == true {
		return nil
	}
	if err := bounds.Admit(c); err != nil {
		return err
	}
	return fault.Errorf(fault.CodeInternal, "turn_create created nothing though the bounds admit it")
}

// GetApproval implements gate.TurnStore.
func (s *Store) GetApproval(ctx context.Context, id string) (*gate.TurnRecord, error) {
	recs, err := query(ctx, s, "get approval", neo4j.AccessModeRead, "turn_get", map[string]any{"id": id})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fault.Errorf(fault.CodeNotFound, "no turn %s", id)
	}
	return decodeTurn(field(recs[0], "record"))
}

// ListApprovals implements gate.TurnStore.
func (s *Store) ListApprovals(ctx context.Context, f gate.ApprovalFilter) ([]*gate.TurnRecord, error) {
	switch {
	case f.Limit < 0:
		return nil, invalid("limit", "limit must not be negative")
	case f.Status != "" && !f.Status.Valid():
		return nil, invalid("status", "status %q is not a turn status", f.Status)
	}
	limit := f.Limit
	if limit == 0 {
		limit = gate.DefaultApprovalLimit
	}
	limit = min(limit, gate.MaxApprovalLimit)
	recs, err := query(ctx, s, "list approvals", neo4j.AccessModeRead, "turns", map[string]any{
		"status": nilIfEmpty(string(f.Status)), "session": nilIfEmpty(f.SessionID), "before": nilIfEmpty(f.Before), "limit": limit})
	if err != nil {
		return nil, err
	}
	out := make([]*gate.TurnRecord, 0, len(recs))
	for _, rec := range recs {
		r, err := decodeTurn(field(rec, "record"))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// TransitionTurn implements gate.TurnStore: one write transaction
// locks the turn (turn_lock.cypher), checks gate.CheckTransition,
// writes the record and appends the decisions.
func (s *Store) TransitionTurn(ctx context.Context, next gate.TurnRecord, from []gate.TurnStatus, live bool, now time.Time, ds ...audit.Decision) (*gate.TurnRecord, error) {
	next = next.PurgedAt(now)
	dps := make([]map[string]any, len(ds))
	for i, d := range ds {
		var err error
		if dps[i], err = decisionParams(d); err != nil {
			return nil, err
		}
	}
	params, err := turnParams(next)
	if err != nil {
		return nil, err
	}
	return writeTx(ctx, s, "transition turn", func(ctx context.Context, tx neo4j.ManagedTransaction) (*gate.TurnRecord, error) {
		recs, err := collect(ctx, tx, "turn_lock", map[string]any{"id": next.ID})
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, fault.Errorf(fault.CodeNotFound, "no turn %s", next.ID)
		}
		cur, err := decodeTurn(field(recs[0], "record"))
		if err != nil {
			return nil, err
		}
		if err := gate.CheckTransition(cur, from, live, now); err != nil {
			return nil, err
		}
		if err := gate.CheckPause(cur, next); err != nil {
			return nil, err
		}
		if err := exec(ctx, tx, "turn_set", params); err != nil {
			return nil, err
		}
		for _, dp := range dps {
			if err := appendDecision(ctx, tx, dp); err != nil {
				return nil, err
			}
		}
		return decodeTurn(params["record"])
	})
}

// FinishTurn implements gate.TurnStore: the transition to done, when the
// turn is still running (turn_lock, turn_set), and what the run left
// (RecordRun's statements), in one transaction.
func (s *Store) FinishTurn(ctx context.Context, next gate.TurnRecord, now time.Time, rr procedures.RunRecord) (*gate.TurnRecord, bool, []procedures.UseResult, error) {
	next = next.PurgedAt(now)
	run, err := runStatements(rr)
	if err != nil {
		return nil, false, nil, err
	}
	params, err := turnParams(next)
	if err != nil {
		return nil, false, nil, err
	}
	type finished struct {
		turn *gate.TurnRecord
		done bool
		res  []procedures.UseResult
	}
	f, err := writeTx(ctx, s, "finish turn", func(ctx context.Context, tx neo4j.ManagedTransaction) (finished, error) {
		recs, err := collect(ctx, tx, "turn_lock", map[string]any{"id": next.ID})
		if err != nil {
			return finished{}, err
		}
		if len(recs) == 0 {
			return finished{}, fault.Errorf(fault.CodeNotFound, "no turn %s", next.ID)
		}
		cur, err := decodeTurn(field(recs[0], "record"))
		if err != nil {
			return finished{}, err
		}
		f := finished{turn: cur}
		err = gate.CheckTransition(cur, []gate.TurnStatus{gate.TurnRunning}, false, now)
		if err == nil {
			err = gate.CheckPause(cur, next)
		}
		switch f.done = err == nil; {
		case f.done:
			if err := exec(ctx, tx, "turn_set", params); err != nil {
				return finished{}, err
			}
			if f.turn, err = decodeTurn(params["record"]); err != nil {
				return finished{}, err
			}
		case fault.ErrorCode(err) != fault.CodeConflict:
			return finished{}, err
		}
		if f.res, err = s.recordRun(ctx, tx, run); err != nil {
			return finished{}, err
		}
		return f, nil
	})
	if err != nil {
		return nil, false, nil, err
	}
	return f.turn, f.done, f.res, nil
}

// policyID is a policy node's key.
func policyID(session, codeHash string) string { return session + "\x00" + codeHash }

// policyRecord is a stored policy (SessionPolicy hides its session from JSON).
type policyRecord struct {
	gate.SessionPolicy
	Session string `json:"session_id"`
}

func decodePolicy(v any) (gate.SessionPolicy, error) {
	s, _ := v.(string)
	var r policyRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return gate.SessionPolicy{}, fault.Errorf(fault.CodeInternal, "a stored policy does not decode: %v", err)
	}
	r.SessionPolicy.SessionID = r.Session
	return r.SessionPolicy, nil
}

// PutPolicy implements gate.TurnStore.
func (s *Store) PutPolicy(ctx context.Context, p gate.SessionPolicy, d audit.Decision) error {
	dp, err := decisionParams(d)
	if err != nil {
		return err
	}
	p.SetAt = dbTime(p.SetAt)
	b, err := json.Marshal(policyRecord{SessionPolicy: p, Session: p.SessionID})
	if err != nil {
		return fault.Errorf(fault.CodeInvalid, "the policy cannot be stored: %v", err)
	}
	_, err = writeTx(ctx, s, "put policy", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
		if err := exec(ctx, tx, "policy_put", map[string]any{"id": policyID(p.SessionID, p.CodeHash),
			"session": p.SessionID, "codeHash": p.CodeHash, "record": string(b)}); err != nil {
			return struct{}{}, err
		}
		if err := exec(ctx, tx, "auth_bump", nil); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, appendDecision(ctx, tx, dp)
	})
	return err
}

// Policy implements gate.TurnStore.
func (s *Store) Policy(ctx context.Context, sessionID, codeHash string) (gate.SessionPolicy, bool, error) {
	recs, err := query(ctx, s, "get policy", neo4j.AccessModeRead, "policy_get", map[string]any{"id": policyID(sessionID, codeHash)})
	if err != nil || len(recs) == 0 {
		return gate.SessionPolicy{}, false, err
	}
	p, err := decodePolicy(field(recs[0], "record"))
	return p, err == nil, err
}

// Policies implements gate.TurnStore.
func (s *Store) Policies(ctx context.Context, sessionID string) ([]gate.SessionPolicy, error) {
	recs, err := query(ctx, s, "list policies", neo4j.AccessModeRead, "policies", map[string]any{"session": sessionID, "prefix": ""})
	if err != nil {
		return nil, err
	}
	out := make([]gate.SessionPolicy, 0, len(recs))
	for _, rec := range recs {
		p, err := decodePolicy(field(rec, "record"))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// DeletePolicies implements gate.TurnStore.
func (s *Store) DeletePolicies(ctx context.Context, sessionID, prefix string, records gate.PolicyRecords) (int, error) {
	return writeTx(ctx, s, "delete policies", func(ctx context.Context, tx neo4j.ManagedTransaction) (int, error) {
		recs, err := collect(ctx, tx, "policies", map[string]any{"session": sessionID, "prefix": prefix})
		if err != nil {
			return 0, err
		}
		if err := gate.CheckPolicyMatches(prefix, len(recs)); err != nil {
			return 0, err
		}
		ids, hashes := make([]string, len(recs)), make([]string, len(recs))
		for i, rec := range recs {
			ids[i], _ = field(rec, "id").(string)
			p, err := decodePolicy(field(rec, "record"))
			if err != nil {
				return 0, err
			}
			hashes[i] = p.CodeHash
		}
		ds, err := records(hashes)
		if err != nil {
			return 0, err
		}
		if err := exec(ctx, tx, "policies_delete", map[string]any{"ids": ids}); err != nil {
			return 0, err
		}
		if err := exec(ctx, tx, "auth_bump", nil); err != nil {
			return 0, err
		}
		for _, d := range ds {
			dp, err := decisionParams(d)
			if err != nil {
				return 0, err
			}
			if err := appendDecision(ctx, tx, dp); err != nil {
				return 0, err
			}
		}
		return len(ids), nil
	})
}
