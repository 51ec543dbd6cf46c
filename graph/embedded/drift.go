package embedded

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// defaultBaseline gives r, a version of the procedure name without a
// baseline, the stored catalogue's contracts of the procedure's signature
// (nothing when the procedure is not stored yet).
func (s *Store) defaultBaseline(tx *bolt.Tx, name string, r *versionRecord) error {
	rec, err := s.getProc(tx, name)
	if err != nil || rec == nil {
		return err
	}
	cat, err := s.catalogueIn(tx)
	if err != nil {
		return err
	}
	r.Baseline = procedures.BaselineOf(rec.Signature, cat)
	return nil
}

// upgradeBaselines gives every version stored before drift was kept the
// current catalogue's contracts as its baseline, once (metaBaselines marks
// it done; a version that has one keeps it).
func (s *Store) upgradeBaselines(tx *bolt.Tx) error {
	meta := tx.Bucket(bMeta)
	if meta.Get(metaBaselines) != nil {
		return nil
	}
	var missing [][]byte
	c := tx.Bucket(bVersions).Cursor()
	idx := tx.Bucket(bBaselines)
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if idx.Get(k) == nil {
			missing = append(missing, bytes.Clone(k))
		}
	}
	for _, k := range missing {
		name, hash, _ := bytes.Cut(k, []byte{0})
		r, err := s.getVersion(tx, string(name), string(hash))
		if err != nil {
			return err
		}
		if r.Baseline == nil {
			if err := s.putVersion(tx, string(name), r); err != nil {
				return err
			}
		}
	}
	return meta.Put(metaBaselines, []byte("1"))
}

// Drifted returns a page of the stale versions (see procedures.Store): it
// reads the baseline keys of every version (bBaselines, a few bytes each)
// and the procedure of each stale one (which version is current), and
// decodes only the versions of the page.
func (s *Store) Drifted(ctx context.Context, limit, offset int) ([]procedures.StaleVersion, int, error) {
	if limit < 0 || offset < 0 {
		return nil, 0, fault.Errorf(fault.CodeInvalid, "limit and offset must not be negative")
	}
	var out []procedures.StaleVersion
	var total int
	err := s.view(ctx, func(tx *bolt.Tx) error {
		cat, err := s.catalogueIn(tx)
		if err != nil {
			return err
		}
		current := map[string]struct{}{}
		for _, k := range cat.ContractKeys() {
			current[k] = struct{}{}
		}
		procs := tx.Bucket(bProcs).Cursor()
		var stale []procedures.StaleVersion
		var lastName []byte
		var lastCurrent string
		err = tx.Bucket(bBaselines).ForEach(func(k, v []byte) error {
			if !staleKeys(v, current) {
				return nil
			}
			name, hash, _ := bytes.Cut(k, []byte{0})
			if !bytes.Equal(name, lastName) {
				raw := get(procs, name)
				if raw == nil {
					return nil // a version whose procedure is gone: not listed
				}
				rec, err := s.procCache.Get(name, raw, "procedure")
				if err != nil {
					return err
				}
				lastName, lastCurrent = name, rec.Current
			}
			stale = append(stale, procedures.StaleVersion{Procedure: string(name), CodeHash: string(hash), Current: lastCurrent == string(hash)})
			return nil
		})
		if err != nil {
			return err
		}
		procedures.SortStale(stale)
		total = len(stale)
		out = procedures.PageStale(stale, limit, offset)
		for i := range out {
			r, err := s.getVersion(tx, out[i].Procedure, out[i].CodeHash)
			if err != nil {
				return err
			}
			if r != nil {
				out[i].Baseline, out[i].At, out[i].Verification = r.Baseline, fromMs(r.CapturedAt), r.Verification
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// staleKeys reports whether one of the "\n"-separated keys in v is not in
// current.
func staleKeys(v []byte, current map[string]struct{}) bool {
	for len(v) > 0 {
		k, rest, _ := bytes.Cut(v, []byte{'\n'})
		if _, ok := current[string(k)]; !ok {
			return true
		}
		v = rest
	}
	return false
}

// Rebaseline gives a version the stored catalogue's contracts (see
// procedures.Store).
func (s *Store) Rebaseline(ctx context.Context, in procedures.RebaselineInput) (*procedures.Version, error) {
	if err := checkPart("name", in.Name); err != nil {
		return nil, err
	}
	if err := checkPart("code_hash", in.CodeHash); err != nil {
		return nil, err
	}
	var out *procedures.Version
	err := s.update(ctx, func(tx *bolt.Tx) error {
		rec, err := s.mustProc(tx, in.Name)
		if err != nil {
			return err
		}
		r, err := s.getVersion(tx, in.Name, in.CodeHash)
		if err != nil {
			return err
		}
		if r == nil {
			return noVersion(in.Name, in.CodeHash)
		}
		cat, err := s.catalogueIn(tx)
		if err != nil {
			return err
		}
		if in.Revision != "" && cat.Revision != in.Revision {
			v := r.version(rec.Current == r.CodeHash)
			out = &v
			return nil
		}
		if in.Decision != nil {
			if len(procedures.DriftOf(r.Baseline, cat)) == 0 {
				return notStale(in.Name, in.CodeHash)
			}
			if err := appendDecision(tx, *in.Decision); err != nil {
				return err
			}
		}
		r.Baseline = procedures.BaselineOf(rec.Signature, cat)
		if err := s.putVersion(tx, in.Name, r); err != nil {
			return err
		}
		if err := bumpAuth(tx); err != nil {
			return err
		}
		v := r.version(rec.Current == r.CodeHash)
		out = &v
		return nil
	})
	return out, err
}

func notStale(name, hash string) error {
	return fault.Errorf(fault.CodeConflict, "version %s of %s is not stale: its tools are as it last worked with them", hash, name).
		WithDetails("reason", procedures.ReasonNotStale)
}
