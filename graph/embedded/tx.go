package embedded

import (
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
)

// addKey adds k to the usage-key bucket b and reports whether it was new.
func addKey(tx *bolt.Tx, b []byte, k []byte) (bool, error) {
	bk := tx.Bucket(b)
	if bk.Get(k) != nil {
		return false, nil
	}
	return true, bk.Put(k, []byte{})
}

// linkCause upserts the cause (setting its description when it has none)
// and its edge to the procedure.
func linkCause(tx *bolt.Tx, cause, desc, name string) error {
	c, err := getCause(tx, cause)
	if err != nil {
		return err
	}
	changed := false
	if c == nil {
		c, changed = &causeRecord{}, true
	}
	if c.Description == "" && desc != "" {
		c.Description, changed = desc, true
	}
	ek := key(name, cause)
	if tx.Bucket(bEdgesPC).Get(ek) == nil {
		c.Procedures++
		changed = true
		if err := tx.Bucket(bEdgesPC).Put(ek, u64(0)); err != nil {
			return err
		}
		if err := tx.Bucket(bEdgesCP).Put(key(cause, name), u64(0)); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	return putCause(tx, cause, c)
}

// countEdge counts the usage key on the (linked) edge cause → name.
func countEdge(tx *bolt.Tx, cause, name, usageKey string) error {
	added, err := addKey(tx, bKeysEdge, key(cause, name, usageKey))
	if err != nil || !added {
		return err
	}
	pc, cp := key(name, cause), key(cause, name)
	f := getU64(tx.Bucket(bEdgesPC).Get(pc)) + 1
	if err := tx.Bucket(bEdgesPC).Put(pc, u64(f)); err != nil {
		return err
	}
	if err := tx.Bucket(bEdgesCP).Put(cp, u64(f)); err != nil {
		return err
	}
	c, err := getCause(tx, cause)
	if err != nil {
		return err
	}
	c.Frequency++
	return putCause(tx, cause, c)
}

// putProc stores rec, moves its rank entry and its class count; cur is its
// current version.
func putProc(tx *bolt.Tx, rec *procRecord, cur *versionRecord) error {
	b, err := encode(rec)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bProcs).Put([]byte(rec.Name), b); err != nil {
		return err
	}
	byName, rank := tx.Bucket(bRankByName), tx.Bucket(bRank)
	rk := rankKey(rec.Frequency, rec.LastUsedAt, rec.Name)
	c := classOf(rec, cur)
	counted := false
	if old := byName.Get([]byte(rec.Name)); old != nil {
		var s summary
		if v := rank.Get(old); v != nil && decodeSummary(v, &s) {
			if was := s.class(); was != c {
				if err := countClass(tx, was, rec.Signature, -1); err != nil {
					return err
				}
			} else {
				counted = true
			}
		}
		if string(old) != string(rk) {
			if err := rank.Delete(old); err != nil {
				return err
			}
		}
	}
	if !counted {
		if err := countClass(tx, c, rec.Signature, 1); err != nil {
			return err
		}
	}
	if err := rank.Put(rk, encodeSummary(c, rec.Signature)); err != nil {
		return err
	}
	return byName.Put([]byte(rec.Name), rk)
}

// noProcedure is the CodeNotFound of a procedure the store does not hold.
func noProcedure(name string) error {
	return fault.Errorf(fault.CodeNotFound, "no procedure %s", name)
}

// noVersion is the CodeNotFound of a version procedure name does not hold.
func noVersion(name, hash string) error {
	return fault.Errorf(fault.CodeNotFound, "procedure %s has no version %s", name, hash)
}

// mustProc is getProc returning CodeNotFound for a missing procedure.
func (s *Store) mustProc(tx *bolt.Tx, name string) (*procRecord, error) {
	r, err := s.getProc(tx, name)
	if err == nil && r == nil {
		err = noProcedure(name)
	}
	return r, err
}

// getProc is the procedure name as tx holds it (nil when it holds none),
// decoded once for reads and writes alike through the decode cache: a copy
// of the shared record, so its fields may be set; what they point at stays
// shared and is never changed in place (a write replaces it).
func (s *Store) getProc(tx *bolt.Tx, name string) (*procRecord, error) {
	raw := tx.Bucket(bProcs).Get([]byte(name))
	if raw == nil {
		return nil, nil
	}
	shared, err := s.procCache.Get([]byte(name), raw, "procedure")
	if err != nil {
		return nil, err
	}
	r := *shared
	return &r, nil
}

// getVersion is the version hash of procedure name as tx holds it (nil
// when it holds none), through the decode cache as getProc: a copy of the
// shared record, with its health read anew.
func (s *Store) getVersion(tx *bolt.Tx, name, hash string) (*versionRecord, error) {
	k := key(name, hash)
	raw := tx.Bucket(bVersions).Get(k)
	if raw == nil {
		return nil, nil
	}
	shared, err := s.versionCache.Get(k, raw, "version")
	if err != nil {
		return nil, err
	}
	r := *shared
	if r.Health, err = versionHealth(tx, k, shared); err != nil {
		return nil, err
	}
	return &r, nil
}

// mustVersion is getVersion, fault.CodeNotFound when there is none.
func (s *Store) mustVersion(tx *bolt.Tx, name, hash string) (*versionRecord, error) {
	r, err := s.getVersion(tx, name, hash)
	if err == nil && r == nil {
		err = noVersion(name, hash)
	}
	return r, err
}

// putVersion stores r, its baseline's keys (bBaselines) and its health
// (bHealth; the record itself carries none). A version
// without a baseline (one a dump carried without) is given the stored
// catalogue's contracts of its procedure's signature, when the procedure
// is stored.
func (s *Store) putVersion(tx *bolt.Tx, name string, r *versionRecord) error {
	if r.Baseline == nil {
		if err := s.defaultBaseline(tx, name, r); err != nil {
			return err
		}
	}
	rec := *r
	rec.Health = nil
	b, err := encode(&rec)
	if err != nil {
		return err
	}
	k := key(name, r.CodeHash)
	if err := tx.Bucket(bVersions).Put(k, b); err != nil {
		return err
	}
	if err := s.indexCanonical(tx, name, r); err != nil {
		return err
	}
	if err := putHealth(tx, k, r.Health); err != nil {
		return err
	}
	if r.Baseline == nil {
		return tx.Bucket(bBaselines).Delete(k)
	}
	return tx.Bucket(bBaselines).Put(k, []byte(strings.Join(r.Baseline.Keys(), "\n")))
}

func getCause(tx *bolt.Tx, name string) (*causeRecord, error) {
	v := tx.Bucket(bCauses).Get([]byte(name))
	if v == nil {
		return nil, nil
	}
	var c causeRecord
	if err := decode(v, &c, "cause "+name); err != nil {
		return nil, err
	}
	return &c, nil
}

func putCause(tx *bolt.Tx, name string, c *causeRecord) error {
	b, err := encode(c)
	if err != nil {
		return err
	}
	return tx.Bucket(bCauses).Put([]byte(name), b)
}
