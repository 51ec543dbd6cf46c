package embedded

import (
	"bytes"
	"context"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// Decision list limits: procedures'.
const (
	defaultDecisionLimit = procedures.DefaultDecisionLimit
	maxDecisionLimit     = procedures.MaxDecisionLimit
)

func validateDecision(d *procedures.Decision) error {
	switch {
	case d.ID == "" || len(d.ID) > maxPart:
		return invalid("decision.id", "decision id is empty or longer than %d bytes", maxPart)
	case !d.Kind.Valid():
		return invalid("decision.kind", "decision kind %q is unknown", d.Kind)
	case d.At.IsZero():
		return invalid("decision.at", "decision time is missing")
	case len(d.Procedure) > maxPart || strings.IndexByte(d.Procedure, 0) >= 0:
		return invalid("decision.procedure", "decision procedure name is malformed")
	}
	return nil
}

// appendDecision stores d (validated) in tx. The same record again is a
// no-op; another record under a known id is a CodeConflict.
// appendAndLoad appends d and returns the procedure name as tx now holds
// it: the common tail of the single-procedure decisions.
func (s *Store) appendAndLoad(tx *bolt.Tx, d procedures.Decision, name string) (*procedures.Procedure, error) {
	if err := appendDecision(tx, d); err != nil {
		return nil, err
	}
	return s.loadProcedure(tx, name)
}

func appendDecision(tx *bolt.Tx, d procedures.Decision) error {
	d.At = norm(d.At)
	ids := tx.Bucket(bDecisionIDs)
	b, err := encode(d)
	if err != nil {
		return err
	}
	if t := ids.Get([]byte(d.ID)); t != nil {
		stored := tx.Bucket(bDecisions).Get(append(append([]byte{}, t...), d.ID...))
		if bytes.Equal(stored, b) {
			return nil
		}
		return fault.Errorf(fault.CodeConflict, "decision %s already exists", d.ID)
	}
	dk := decisionKey(d.At, d.ID)
	if err := tx.Bucket(bDecisions).Put(dk, b); err != nil {
		return err
	}
	if err := ids.Put([]byte(d.ID), dk[:8]); err != nil {
		return err
	}
	if d.Procedure == "" {
		return nil
	}
	return tx.Bucket(bDecByProc).Put(append(prefix(d.Procedure), dk...), nil)
}

// AppendDecision appends an audit record. Returns CodeInvalid for a record
// without id, kind or time, CodeConflict for a known id.
func (s *Store) AppendDecision(ctx context.Context, d procedures.Decision) error {
	if err := validateDecision(&d); err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error { return appendDecision(tx, d) })
}

// SetDecisionResult records result as the result of the run the decision
// id allowed, in its record (see procedures.Store).
func (s *Store) SetDecisionResult(ctx context.Context, id, result string) error {
	if !slices.Contains(procedures.RunResults, result) {
		return invalid("result", "result %q is not a run's result", result)
	}
	return s.write(ctx, func(tx *bolt.Tx) error {
		t := tx.Bucket(bDecisionIDs).Get([]byte(id))
		if t == nil {
			return fault.Errorf(fault.CodeNotFound, "no decision %s", id)
		}
		dk := append(append([]byte{}, t...), id...)
		v := tx.Bucket(bDecisions).Get(dk)
		if v == nil {
			return fault.Errorf(fault.CodeInternal, "embedded store: decision id %s points at nothing", id)
		}
		var d procedures.Decision
		if err := decode(v, &d, "decision"); err != nil {
			return err
		}
		switch d.Result {
		case result:
			return nil
		case "":
		default:
			return fault.Errorf(fault.CodeConflict, "decision %s already has the result %s", id, d.Result)
		}
		d.Result = result
		b, err := encode(d)
		if err != nil {
			return err
		}
		return tx.Bucket(bDecisions).Put(dk, b)
	})
}

// ListDecisions returns the records matching f, newest first (by time, then
// id). The limit defaults to 100 and is at most 1000.
func (s *Store) ListDecisions(ctx context.Context, f procedures.DecisionFilter) ([]procedures.Decision, error) {
	if f.Limit < 0 {
		return nil, invalid("limit", "limit %d is negative", f.Limit)
	}
	limit := f.Limit
	if limit == 0 {
		limit = defaultDecisionLimit
	}
	limit = min(limit, maxDecisionLimit)
	var out []procedures.Decision
	err := s.view(ctx, func(tx *bolt.Tx) error {
		decisions := tx.Bucket(bDecisions)
		// from is the key to start strictly before: the cursor's, or past
		// the end.
		var from []byte
		if f.Before != "" {
			t := tx.Bucket(bDecisionIDs).Get([]byte(f.Before))
			if t == nil {
				return invalid("before", "before %q is not a decision id", f.Before)
			}
			from = append(append([]byte{}, t...), f.Before...)
		}
		add := func(v []byte) error {
			var d procedures.Decision
			if err := decode(v, &d, "decision"); err != nil {
				return err
			}
			if f.Kind == "" || d.Kind == f.Kind {
				d.At = d.At.UTC()
				out = append(out, d)
			}
			return nil
		}
		if f.Procedure == "" {
			c := decisions.Cursor()
			k, v := seekBefore(c, from)
			for ; k != nil && len(out) < limit; k, v = c.Prev() {
				if err := add(v); err != nil {
					return err
				}
			}
			return nil
		}
		p := prefix(f.Procedure)
		c := tx.Bucket(bDecByProc).Cursor()
		end := append(key(f.Procedure), 1) // the first key after the prefix
		if from != nil {
			end = append(append([]byte{}, p...), from...)
		}
		k, _ := seekBefore(c, end)
		for ; k != nil && strings.HasPrefix(string(k), string(p)) && len(out) < limit; k, _ = c.Prev() {
			v := decisions.Get(k[len(p):])
			if v == nil {
				return fault.Errorf(fault.CodeInternal, "embedded store: decision index points at nothing")
			}
			if err := add(v); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// seekBefore positions c on the last key before from (the last key when
// from is nil) and returns it.
func seekBefore(c *bolt.Cursor, from []byte) ([]byte, []byte) {
	if from == nil {
		return c.Last()
	}
	if k, _ := c.Seek(from); k == nil {
		return c.Last()
	}
	return c.Prev()
}

// Promote makes the version codeHash current and appends d, in one
// transaction (see procedures.Store).
func (s *Store) Promote(ctx context.Context, name, codeHash string, d procedures.Decision) (*procedures.Procedure, error) {
	if err := validateDecision(&d); err != nil {
		return nil, err
	}
	var out *procedures.Procedure
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := mustProc(tx, name)
		if err != nil {
			return err
		}
		ver, err := mustVersion(tx, name, codeHash)
		if err != nil {
			return err
		}
		if ver.Status != procedures.StatusSucceeded {
			return fault.Errorf(fault.CodeConflict, "version %s of %s did not succeed and cannot be promoted", codeHash, name).
				WithDetails("reason", procedures.ReasonProcedureNotSucceeded)
		}
		rec.Current, rec.Demoted = codeHash, false // a promote lifts a demotion
		if err := putProc(tx, rec, ver); err != nil {
			return err
		}
		out, err = s.appendAndLoad(tx, d, name)
		return err
	})
	return out, err
}

// SetRetired stores r as the procedure's retirement (nil brings it back),
// moving its class, reclassifies its callers, and appends d, in one
// transaction (see procedures.Store).
func (s *Store) SetRetired(ctx context.Context, name string, r *procedures.Retirement, d procedures.Decision) (*procedures.Procedure, error) {
	if err := validateDecision(&d); err != nil {
		return nil, err
	}
	var out *procedures.Procedure
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := mustProc(tx, name)
		if err != nil {
			return err
		}
		rec.Retired = nil
		if r != nil {
			rec.Retired = &retiredRecord{By: r.RetiredBy, At: ms(r.RetiredAt), Reason: r.Reason}
		}
		cur, err := getVersion(tx, name, rec.Current)
		if err != nil {
			return err
		}
		if cur == nil {
			return fault.Errorf(fault.CodeInternal, "embedded store: procedure %s lost its current version %s", name, rec.Current)
		}
		if err := putProc(tx, rec, cur); err != nil {
			return err
		}
		// Its callers' classification follows (ReasonCallsRetired).
		affected, err := procedures.Affected(txClasses{tx}, []string{name})
		if err != nil {
			return err
		}
		if err := reclassify(tx, affected); err != nil {
			return err
		}
		out, err = s.appendAndLoad(tx, d, name)
		return err
	})
	return out, err
}

// LiftDemotion lifts the procedure's demotion, starts its current
// version's demotion streak again and appends in.Decision, in one
// transaction, when the procedure is demoted and in's version and
// revision, when set, are still current (see procedures.Store).
func (s *Store) LiftDemotion(ctx context.Context, in procedures.LiftInput) (*procedures.Procedure, error) {
	d := in.Decision
	if err := validateDecision(&d); err != nil {
		return nil, err
	}
	var out *procedures.Procedure
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := mustProc(tx, in.Name)
		if err != nil {
			return err
		}
		if !rec.Demoted {
			return procedures.NotDemoted(in.Name)
		}
		cat, err := catalogueIn(tx)
		if err != nil {
			return err
		}
		if (in.CodeHash != "" && in.CodeHash != rec.Current) || (in.Revision != "" && in.Revision != cat.Revision) {
			return procedures.LiftOutdated(in.Name)
		}
		cur, err := mustVersion(tx, in.Name, rec.Current)
		if err != nil {
			return err
		}
		rec.Demoted = false
		if cur.Health != nil {
			cur.Health = procedures.StreakReset().Apply(cur.Health)
			if err := putHealth(tx, key(in.Name, rec.Current), cur.Health); err != nil {
				return err
			}
		}
		if err := putProc(tx, rec, cur); err != nil {
			return err
		}
		out, err = s.appendAndLoad(tx, d, in.Name)
		return err
	})
	return out, err
}

// SetGrant stores g bound to expectHash (nil revokes) and appends d, in one
// transaction, if expectHash is still current (see procedures.Store).
func (s *Store) SetGrant(ctx context.Context, name string, g *procedures.Grant, expectHash string, d procedures.Decision) (*procedures.Procedure, error) {
	if err := validateDecision(&d); err != nil {
		return nil, err
	}
	var out *procedures.Procedure
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := mustProc(tx, name)
		if err != nil {
			return err
		}
		if rec.Current != expectHash {
			return fault.Errorf(fault.CodeConflict, "the current code of %s is no longer %s", name, expectHash).
				WithDetails("reason", procedures.ReasonCodeChanged)
		}
		grants := tx.Bucket(bGrants)
		if g == nil {
			err = grants.Delete([]byte(name))
		} else {
			bound := *g
			bound.CodeHash = expectHash
			bound.GrantedAt = norm(bound.GrantedAt)
			var b []byte
			if b, err = encode(bound); err == nil {
				err = grants.Put([]byte(name), b)
			}
		}
		if err != nil {
			return err
		}
		out, err = s.appendAndLoad(tx, d, name)
		return err
	})
	return out, err
}
