package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
)

var _ gate.TurnStore = (*Store)(nil)

// CreateApproval implements gate.TurnStore: the pending counts and
// the write share one read-write transaction, which bbolt serialises. The
// pending index holds each pending turn's deadline and requester
// (pendingEntry), so both counts are one scan of it.
func (s *Store) CreateApproval(ctx context.Context, r gate.TurnRecord, bounds gate.PendingBounds, now time.Time) error {
	if err := gate.CheckApproval(r); err != nil {
		return err
	}
	r.Status = gate.TurnPending
	return s.update(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(bTurns).Get([]byte(r.ID)) != nil {
			return fault.Errorf(fault.CodeConflict, "turn %s exists", r.ID)
		}
		var c gate.PendingCount
		err := tx.Bucket(bPending).ForEach(func(id, v []byte) error {
			deadline, by, err := pendingOf(tx, id, v)
			if err != nil {
				return err
			}
			left := deadline.Sub(now)
			if left <= 0 {
				return nil
			}
			c.Total++
			c.TotalNext = earliest(c.TotalNext, left)
			if by == r.RequestedBy {
				c.Requester++
				c.RequesterNext = earliest(c.RequesterNext, left)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := bounds.Admit(c); err != nil {
			return err
		}
		return putTurn(tx, r)
	})
}

func earliest(cur, d time.Duration) time.Duration {
	if cur == 0 || d < cur {
		return d
	}
	return cur
}

// pendingEntry is a pending index value: the turn's deadline (u64 ms) and
// its requester.
func pendingEntry(r gate.TurnRecord) []byte {
	return append(u64(uint64(ms(r.Deadline))), r.RequestedBy...)
}

// pendingOf reads the pending index entry of turn id: its deadline and
// requester. An entry a version without the requester wrote (only the
// deadline) takes the requester from the turn's record.
func pendingOf(tx *bolt.Tx, id, v []byte) (time.Time, string, error) {
	if len(v) < 8 {
		return time.Time{}, "", fault.Errorf(fault.CodeInternal, "the pending index entry of turn %s is corrupt", id)
	}
	deadline := fromMs(int64(getU64(v[:8])))
	if len(v) > 8 {
		return deadline, string(v[8:]), nil
	}
	t, err := getTurn(tx, string(id))
	if err != nil {
		return time.Time{}, "", err
	}
	return deadline, t.RequestedBy, nil
}

// putTurn writes r as stored (purged, times normalised) and keeps the
// pending index.
func putTurn(tx *bolt.Tx, r gate.TurnRecord) error {
	r = r.Purged()
	r.RequestedAt, r.Deadline = norm(r.RequestedAt), norm(r.Deadline)
	if r.Resolution != nil {
		res := *r.Resolution
		res.At = norm(res.At)
		r.Resolution = &res
	}
	b, err := encode(r)
	if err != nil {
		return err
	}
	id := []byte(r.ID)
	if err := tx.Bucket(bTurns).Put(id, b); err != nil {
		return err
	}
	if r.Status == gate.TurnPending {
		return tx.Bucket(bPending).Put(id, pendingEntry(r))
	}
	return tx.Bucket(bPending).Delete(id)
}

func getTurn(tx *bolt.Tx, id string) (*gate.TurnRecord, error) {
	v := tx.Bucket(bTurns).Get([]byte(id))
	if v == nil {
		return nil, fault.Errorf(fault.CodeNotFound, "no turn %s", id)
	}
	var r gate.TurnRecord
	if err := decode(v, &r, "turn"); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetApproval implements gate.TurnStore.
func (s *Store) GetApproval(ctx context.Context, id string) (*gate.TurnRecord, error) {
	var out *gate.TurnRecord
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		out, err = getTurn(tx, id)
		return err
	})
	return out, err
}

// ListApprovals implements gate.TurnStore. Turn ids are time-ordered,
// so newest first is the bucket in reverse. With a status filter, a record
// whose JSON does not hold the status's key and value verbatim (encode is
// json.Marshal: no white space, quotes inside strings escaped) cannot
// match and is skipped undecoded — the sweeper lists the open statuses
// among every turn ever stored; one that holds them is decoded and checked.
func (s *Store) ListApprovals(ctx context.Context, f gate.ApprovalFilter) ([]*gate.TurnRecord, error) {
	limit, err := approvalLimit(f)
	if err != nil {
		return nil, err
	}
	var status []byte
	if f.Status != "" {
		if status, err = json.Marshal(map[string]gate.TurnStatus{"status": f.Status}); err != nil {
			return nil, err
		}
		status = status[1 : len(status)-1] // "status":"…"
	}
	out := []*gate.TurnRecord{}
	err = s.view(ctx, func(tx *bolt.Tx) error {
		out = out[:0]
		c := tx.Bucket(bTurns).Cursor()
		k, v := c.Last()
		if f.Before != "" {
			k, v = c.Seek([]byte(f.Before))
			if k == nil {
				k, v = c.Last()
			}
			for k != nil && bytes.Compare(k, []byte(f.Before)) >= 0 {
				k, v = c.Prev()
			}
		}
		for ; k != nil && len(out) < limit; k, v = c.Prev() {
			if status != nil && !bytes.Contains(v, status) {
				continue
			}
			var r gate.TurnRecord
			if err := decode(v, &r, "turn"); err != nil {
				return err
			}
			if (f.Status == "" || r.Status == f.Status) && (f.SessionID == "" || r.SessionID == f.SessionID) {
				out = append(out, &r)
			}
		}
		return nil
	})
	return out, err
}

// approvalLimit checks f and returns its effective limit.
func approvalLimit(f gate.ApprovalFilter) (int, error) {
	switch {
	case f.Limit < 0:
		return 0, fault.Errorf(fault.CodeInvalid, "limit must not be negative").WithDetails("field", "limit")
	case f.Status != "" && !f.Status.Valid():
		return 0, fault.Errorf(fault.CodeInvalid, "status %q is not a turn status", f.Status).WithDetails("field", "status")
	case f.Limit == 0:
		return gate.DefaultApprovalLimit, nil
	}
	return min(f.Limit, gate.MaxApprovalLimit), nil
}

// TransitionTurn implements gate.TurnStore.
func (s *Store) TransitionTurn(ctx context.Context, next gate.TurnRecord, from []gate.TurnStatus, live bool, now time.Time, ds ...audit.Decision) (*gate.TurnRecord, error) {
	next = next.PurgedAt(now)
	for i := range ds {
		if err := validateDecision(&ds[i]); err != nil {
			return nil, err
		}
	}
	var out *gate.TurnRecord
	err := s.update(ctx, func(tx *bolt.Tx) error {
		cur, err := getTurn(tx, next.ID)
		if err != nil {
			return err
		}
		if err := gate.CheckTransition(cur, from, live, now); err != nil {
			return err
		}
		if err := gate.CheckPause(cur, next); err != nil {
			return err
		}
		if err := putTurn(tx, next); err != nil {
			return err
		}
		for _, d := range ds {
			if err := appendDecision(tx, d); err != nil {
				return err
			}
		}
		out, err = getTurn(tx, next.ID)
		return err
	})
	return out, err
}

// FinishTurn implements gate.TurnStore: the transition to done, when the
// turn is still running, and what the run left, in one transaction.
func (s *Store) FinishTurn(ctx context.Context, next gate.TurnRecord, now time.Time, rr procedures.RunRecord) (*gate.TurnRecord, bool, []procedures.UseResult, error) {
	next = next.PurgedAt(now)
	if err := validateRun(&rr); err != nil {
		return nil, false, nil, err
	}
	var out *gate.TurnRecord
	var done bool
	var res []procedures.UseResult
	err := s.update(ctx, func(tx *bolt.Tx) error {
		cur, err := getTurn(tx, next.ID)
		if err != nil {
			return err
		}
		err = gate.CheckTransition(cur, []gate.TurnStatus{gate.TurnRunning}, false, now)
		if err == nil {
			err = gate.CheckPause(cur, next)
		}
		switch done = err == nil; {
		case done:
			if err := putTurn(tx, next); err != nil {
				return err
			}
		case fault.ErrorCode(err) != fault.CodeConflict:
			return err
		}
		if res, err = s.recordRun(tx, rr); err != nil {
			return err
		}
		out, err = getTurn(tx, next.ID)
		return err
	})
	if err != nil {
		return nil, false, nil, err
	}
	return out, done, res, nil
}

// PutPolicy implements gate.TurnStore.
func (s *Store) PutPolicy(ctx context.Context, p gate.SessionPolicy, d audit.Decision) error {
	if err := validateDecision(&d); err != nil {
		return err
	}
	p.SetAt = norm(p.SetAt)
	return s.update(ctx, func(tx *bolt.Tx) error {
		b, err := encode(policyRecord{SessionPolicy: p, Session: p.SessionID})
		if err != nil {
			return err
		}
		if err := tx.Bucket(bPolicies).Put(key(p.SessionID, p.CodeHash), b); err != nil {
			return err
		}
		if err := bumpAuth(tx); err != nil {
			return err
		}
		return appendDecision(tx, d)
	})
}

// policyRecord is a stored policy: SessionPolicy hides its session from JSON.
type policyRecord struct {
	gate.SessionPolicy
	Session string `json:"session_id"`
}

func decodePolicy(v []byte) (gate.SessionPolicy, error) {
	var r policyRecord
	if err := decode(v, &r, "session policy"); err != nil {
		return gate.SessionPolicy{}, err
	}
	r.SessionPolicy.SessionID = r.Session
	return r.SessionPolicy, nil
}

// Policy implements gate.TurnStore.
func (s *Store) Policy(ctx context.Context, sessionID, codeHash string) (gate.SessionPolicy, bool, error) {
	var (
		p  gate.SessionPolicy
		ok bool
	)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bPolicies).Get(key(sessionID, codeHash))
		if v == nil {
			return nil
		}
		var err error
		p, err = decodePolicy(v)
		ok = err == nil
		return err
	})
	return p, ok, err
}

// Policies implements gate.TurnStore.
func (s *Store) Policies(ctx context.Context, sessionID string) ([]gate.SessionPolicy, error) {
	out := []gate.SessionPolicy{}
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = out[:0]
		return scanPrefix(tx.Bucket(bPolicies), prefix(sessionID), func(rest, v []byte) error {
			if !ownPolicy(rest) {
				return nil
			}
			p, err := decodePolicy(v)
			if err == nil {
				out = append(out, p)
			}
			return err
		})
	})
	return out, err
}

// ownPolicy reports whether a policy key found under the prefix of a
// session id (prefix: the id, NUL) is that session's (rest is its code
// hash): a key whose rest holds a NUL is a longer id's, stored before
// usage.CheckSessionID refused ids with control characters.
func ownPolicy(rest []byte) bool { return bytes.IndexByte(rest, 0) < 0 }

// DeletePolicies implements gate.TurnStore.
func (s *Store) DeletePolicies(ctx context.Context, sessionID, hashPrefix string, records gate.PolicyRecords) (int, error) {
	n := 0
	err := s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bPolicies)
		var keys [][]byte
		var hashes []string
		err := scanPrefix(b, prefix(sessionID), func(rest, _ []byte) error {
			if ownPolicy(rest) && strings.HasPrefix(string(rest), hashPrefix) {
				keys = append(keys, append(slices.Clone(prefix(sessionID)), rest...))
				hashes = append(hashes, string(rest))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := gate.CheckPolicyMatches(hashPrefix, len(keys)); err != nil {
			return err
		}
		ds, err := records(hashes)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		if err := bumpAuth(tx); err != nil {
			return err
		}
		n = len(keys)
		for _, d := range ds {
			if err := validateDecision(&d); err != nil {
				return err
			}
			if err := appendDecision(tx, d); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}
