package embedded

import (
	"bytes"
	"context"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// Decision list limits: procedures'.
const (
	defaultDecisionLimit = audit.DefaultDecisionLimit
	maxDecisionLimit     = audit.MaxDecisionLimit
)

func validateDecision(d *audit.Decision) error {
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

// appendAndLoad appends d and returns the procedure name as tx now holds
// it: the common tail of the single-procedure decisions.
func (s *Store) appendAndLoad(tx *bolt.Tx, d audit.Decision, name string) (*procedures.Procedure, error) {
	if err := appendDecision(tx, d); err != nil {
		return nil, err
	}
	return s.loadProcedure(tx, name)
}

// appendDecision stores d (validated) in tx, its index entries left to
// the decision indexer (decindex.go). The same record again is a no-op;
// another record under a known id is a CodeConflict.
func appendDecision(tx *bolt.Tx, d audit.Decision) error {
	return putDecision(tx, d, false)
}

// appendIndexedDecision is appendDecision writing the index entries in tx:
// for an import, whose many records would otherwise all wait in
// bUnindexed, read by every filtered listing meanwhile.
func appendIndexedDecision(tx *bolt.Tx, d audit.Decision) error {
	return putDecision(tx, d, true)
}

// putDecision is appendDecision with the index entries written now
// (indexed) or by the indexer.
func putDecision(tx *bolt.Tx, d audit.Decision, indexed bool) error {
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
	if indexed {
		return indexDecision(tx, d, dk)
	}
	return tx.Bucket(bUnindexed).Put(dk, nil)
}

// indexDecision adds the index entries of d, stored under dk.
func indexDecision(tx *bolt.Tx, d audit.Decision, dk []byte) error {
	for _, p := range decisionIndexes(d) {
		if err := tx.Bucket(bDecByField).Put(append(p, dk...), nil); err != nil {
			return err
		}
	}
	if d.Procedure == "" {
		return nil
	}
	return tx.Bucket(bDecByProc).Put(append(prefix(d.Procedure), dk...), nil)
}

// The tags of bDecByField's indexes.
const (
	tagActor       = 'a'
	tagKind        = 'k'
	tagKindOutcome = 'K'
	tagOutcome     = 'o'
)

// fieldPrefix is the bDecByField prefix of the records whose field tag
// has the value parts (joined as key does).
func fieldPrefix(tag byte, parts ...string) []byte {
	return append([]byte{tag}, prefix(parts...)...)
}

// decisionIndexes are the bDecByField prefixes d is listed under (each
// followed by its decision key): by actor, kind, kind and outcome, outcome.
func decisionIndexes(d audit.Decision) [][]byte {
	out := [][]byte{fieldPrefix(tagKind, string(d.Kind)), fieldPrefix(tagKindOutcome, string(d.Kind), string(d.Outcome)),
		fieldPrefix(tagOutcome, string(d.Outcome))}
	if d.Actor != "" {
		out = append(out, fieldPrefix(tagActor, d.Actor))
	}
	return out
}

// upgradeDecisionIndex indexes every audit record stored before
// bDecByField existed, once (metaDecisionIndex marks it done).
func upgradeDecisionIndex(tx *bolt.Tx) error {
	meta := tx.Bucket(bMeta)
	if meta.Get(metaDecisionIndex) != nil {
		return nil
	}
	c := tx.Bucket(bDecisions).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var d audit.Decision
		if err := decode(v, &d, "decision"); err != nil {
			return err
		}
		for _, p := range decisionIndexes(d) {
			if err := tx.Bucket(bDecByField).Put(append(p, k...), nil); err != nil {
				return err
			}
		}
	}
	return meta.Put(metaDecisionIndex, []byte("1"))
}

// AppendDecision appends an audit record. Returns CodeInvalid for a record
// without id, kind or time, CodeConflict for a known id.
func (s *Store) AppendDecision(ctx context.Context, d audit.Decision) error {
	if err := validateDecision(&d); err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error { return appendDecision(tx, d) })
}

// SetDecisionResult records result as the result of the run the decision
// id allowed, in its record (see procedures.Store).
func (s *Store) SetDecisionResult(ctx context.Context, id, result string) error {
	if !slices.Contains(health.RunResults, result) {
		return invalid("result", "result %q is not a run's result", result)
	}
	return s.write(ctx, func(tx *bolt.Tx) error { return setResult(tx, id, result) })
}

// setResult records result (checked) on the record id in tx:
// SetDecisionResult's transaction.
func setResult(tx *bolt.Tx, id, result string) error {
	t := tx.Bucket(bDecisionIDs).Get([]byte(id))
	if t == nil {
		return fault.Errorf(fault.CodeNotFound, "no decision %s", id)
	}
	dk := append(append([]byte{}, t...), id...)
	v := tx.Bucket(bDecisions).Get(dk)
	if v == nil {
		return fault.Errorf(fault.CodeInternal, "embedded store: decision id %s points at nothing", id)
	}
	var d audit.Decision
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
}

// RecordRun commits what a run left in one transaction (see
// procedures.Store): its records, its results, its uses.
func (s *Store) RecordRun(ctx context.Context, rr procedures.RunRecord) ([]procedures.UseResult, error) {
	if err := validateRun(&rr); err != nil {
		return nil, err
	}
	var out []procedures.UseResult
	err := s.write(ctx, func(tx *bolt.Tx) error {
		var err error
		out, err = s.recordRun(tx, rr)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// validateRun checks rr as RecordRun does before its transaction.
func validateRun(rr *procedures.RunRecord) error {
	if err := rr.CheckResults(); err != nil {
		return err
	}
	for i := range rr.Decisions {
		if err := validateDecision(&rr.Decisions[i]); err != nil {
			return err
		}
	}
	for i := range rr.Uses {
		if err := validateUse(&rr.Uses[i]); err != nil {
			return err
		}
	}
	return nil
}

// recordRun writes rr (validated) in tx: RecordRun's transaction.
func (s *Store) recordRun(tx *bolt.Tx, rr procedures.RunRecord) ([]procedures.UseResult, error) {
	out := make([]procedures.UseResult, len(rr.Uses))
	for _, d := range rr.Decisions {
		if err := appendDecision(tx, d); err != nil {
			return nil, err
		}
	}
	for _, r := range rr.Results {
		if err := setResult(tx, r.ID, r.Result); err != nil {
			return nil, err
		}
	}
	for i, in := range rr.Uses {
		res, err := s.use(tx, in)
		if fault.ErrorCode(err) == fault.CodeNotFound {
			continue // an unknown procedure or version: this use writes nothing
		}
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}

// ListDecisions returns the records matching f, newest first (by time, then
// id). The limit defaults to 100 and is at most 1000. It walks one index
// back from the page's upper bound (Before, Until) down to Since: the
// procedure's, else the actor's, else the kind and outcome's, the kind's,
// the outcome's, else the log itself; the other filters are checked on the
// records it reads (DecisionFilter.Match).
func (s *Store) ListDecisions(ctx context.Context, f audit.DecisionFilter) ([]audit.Decision, error) {
	if f.Limit < 0 {
		return nil, invalid("limit", "limit %d is negative", f.Limit)
	}
	limit := f.Limit
	if limit == 0 {
		limit = defaultDecisionLimit
	}
	limit = min(limit, maxDecisionLimit)
	var out []audit.Decision
	err := s.view(ctx, func(tx *bolt.Tx) error {
		decisions := tx.Bucket(bDecisions)
		// upper is the decision key to start strictly before (nil: past
		// the end): the cursor's or Until's, whichever is older.
		var upper []byte
		if !f.Until.IsZero() {
			upper = decisionKey(f.Until, "")
		}
		if f.Before != "" {
			t := tx.Bucket(bDecisionIDs).Get([]byte(f.Before))
			if t == nil {
				return invalid("before", "before %q is not a decision id", f.Before)
			}
			if from := append(append([]byte{}, t...), f.Before...); upper == nil || bytes.Compare(from, upper) < 0 {
				upper = from
			}
		}
		var lower []byte // the oldest time a record may have (8 bytes), nil: none
		if !f.Since.IsZero() {
			lower = decisionKey(f.Since, "")
		}
		idx, p := decisionIndex(tx, f)
		c := idx.Cursor()
		end := upper
		switch {
		case p == nil:
		case upper != nil:
			end = append(append([]byte{}, p...), upper...)
		default:
			end = append(p[:len(p)-1:len(p)-1], 1) // the first key after the prefix
		}
		// An index misses the records still in bUnindexed: they are
		// merged in by key, newest first (the log itself has them all).
		var tail []tailRecord
		if p != nil {
			var err error
			if tail, err = decisionTail(tx, f, upper, lower); err != nil {
				return err
			}
		}
		k, v := seekBefore(c, end)
		for ; k != nil && bytes.HasPrefix(k, p) && len(out) < limit; k, v = c.Prev() {
			dk := k[len(p):]
			if lower != nil && bytes.Compare(dk[:8], lower) < 0 {
				break
			}
			for len(tail) > 0 && len(out) < limit && bytes.Compare(tail[0].key, dk) >= 0 {
				if !bytes.Equal(tail[0].key, dk) {
					out = append(out, tail[0].d)
				}
				tail = tail[1:]
			}
			if len(out) == limit {
				break
			}
			if p != nil {
				if v = decisions.Get(dk); v == nil {
					return fault.Errorf(fault.CodeInternal, "embedded store: decision index points at nothing")
				}
			}
			var d audit.Decision
			if err := decode(v, &d, "decision"); err != nil {
				return err
			}
			d.At = d.At.UTC()
			if f.Match(d) {
				out = append(out, d)
			}
		}
		for ; len(tail) > 0 && len(out) < limit; tail = tail[1:] {
			out = append(out, tail[0].d)
		}
		return nil
	})
	return out, err
}

// decisionIndex is the index ListDecisions walks for f and the prefix of
// its keys (nil: the log itself, keyed by decision key).
func decisionIndex(tx *bolt.Tx, f audit.DecisionFilter) (*bolt.Bucket, []byte) {
	byField := tx.Bucket(bDecByField)
	switch {
	case f.Procedure != "":
		return tx.Bucket(bDecByProc), prefix(f.Procedure)
	case f.Actor != "":
		return byField, fieldPrefix(tagActor, f.Actor)
	case f.Kind != "" && f.Outcome != "":
		return byField, fieldPrefix(tagKindOutcome, string(f.Kind), string(f.Outcome))
	case f.Kind != "":
		return byField, fieldPrefix(tagKind, string(f.Kind))
	case f.Outcome != "":
		return byField, fieldPrefix(tagOutcome, string(f.Outcome))
	}
	return tx.Bucket(bDecisions), nil
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
func (s *Store) Promote(ctx context.Context, name, codeHash string, d audit.Decision) (*procedures.Procedure, error) {
	if err := validateDecision(&d); err != nil {
		return nil, err
	}
	var out *procedures.Procedure
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := s.mustProc(tx, name)
		if err != nil {
			return err
		}
		ver, err := s.mustVersion(tx, name, codeHash)
		if err != nil {
			return err
		}
		if ver.Status != procedures.StatusSucceeded {
			return fault.Errorf(fault.CodeConflict, "version %s of %s did not succeed and cannot be promoted", codeHash, name).
				WithDetails("reason", audit.ReasonProcedureNotSucceeded)
		}
		rec.Current, rec.Demoted = codeHash, false // a promote lifts a demotion
		if err := putProc(tx, rec, ver); err != nil {
			return err
		}
		if err := bumpAuth(tx); err != nil {
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
func (s *Store) SetRetired(ctx context.Context, name string, r *procedures.Retirement, d audit.Decision) (*procedures.Procedure, error) {
	if err := validateDecision(&d); err != nil {
		return nil, err
	}
	var out *procedures.Procedure
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := s.mustProc(tx, name)
		if err != nil {
			return err
		}
		rec.Retired = nil
		if r != nil {
			rec.Retired = &retiredRecord{By: r.RetiredBy, At: ms(r.RetiredAt), Reason: r.Reason}
		}
		cur, err := s.getVersion(tx, name, rec.Current)
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
		affected, err := procedures.Affected(txClasses{s, tx}, []string{name})
		if err != nil {
			return err
		}
		if err := s.reclassify(tx, affected); err != nil {
			return err
		}
		if err := bumpAuth(tx); err != nil {
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
		rec, err := s.mustProc(tx, in.Name)
		if err != nil {
			return err
		}
		if !rec.Demoted {
			return procedures.NotDemoted(in.Name)
		}
		cat, err := s.catalogueIn(tx)
		if err != nil {
			return err
		}
		if (in.CodeHash != "" && in.CodeHash != rec.Current) || (in.Revision != "" && in.Revision != cat.Revision) {
			return procedures.LiftOutdated(in.Name)
		}
		cur, err := s.mustVersion(tx, in.Name, rec.Current)
		if err != nil {
			return err
		}
		rec.Demoted = false
		if cur.Health != nil {
			cur.Health = health.StreakReset().Apply(cur.Health)
			if err := putHealth(tx, key(in.Name, rec.Current), cur.Health); err != nil {
				return err
			}
		}
		if err := putProc(tx, rec, cur); err != nil {
			return err
		}
		if err := bumpAuth(tx); err != nil {
			return err
		}
		out, err = s.appendAndLoad(tx, d, in.Name)
		return err
	})
	return out, err
}

// SetGrant stores g bound to expectHash (nil revokes) and appends d, in one
// transaction, if expectHash is still current and cat (when set) is the
// stored catalogue (see procedures.Store).
func (s *Store) SetGrant(ctx context.Context, name string, g *procedures.Grant, expectHash string, cat *procedures.Catalogue, d audit.Decision) (*procedures.Procedure, error) {
	if err := validateDecision(&d); err != nil {
		return nil, err
	}
	var out *procedures.Procedure
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := s.mustProc(tx, name)
		if err != nil {
			return err
		}
		if err := s.sameCatalogue(tx, cat); err != nil {
			return err
		}
		if rec.Current != expectHash {
			return fault.Errorf(fault.CodeConflict, "the current code of %s is no longer %s", name, expectHash).
				WithDetails("reason", audit.ReasonCodeChanged)
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
		if err := bumpAuth(tx); err != nil {
			return err
		}
		out, err = s.appendAndLoad(tx, d, name)
		return err
	})
	return out, err
}
