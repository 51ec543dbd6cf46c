package embedded

import (
	"context"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/procedures"
)

// Catalogue returns the stored catalogue, or an empty one.
func (s *Store) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	var rec *catalogueRecord
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bCatalogue).Get(catKey)
		if v == nil {
			return nil
		}
		rec = new(catalogueRecord)
		return decode(v, rec, "catalogue")
	})
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return procedures.NewCatalogue(nil)
	}
	c, err := procedures.NewCatalogue(rec.Tools)
	if err != nil {
		return nil, procedures.Errorf(procedures.CodeInternal, "embedded store: stored catalogue is invalid: %v", err)
	}
	c.Revision = rec.Revision
	return c, nil
}

// PutCatalogue replaces the stored catalogue. Its tools are validated as
// procedures.NewCatalogue does, and its revision recomputed.
func (s *Store) PutCatalogue(ctx context.Context, c *procedures.Catalogue) error {
	if c == nil {
		return invalid("catalogue", "no catalogue")
	}
	valid, err := procedures.NewCatalogue(c.Tools)
	if err != nil {
		return err
	}
	b, err := encode(catalogueRecord{Tools: valid.Tools, Revision: valid.Revision})
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error { return tx.Bucket(bCatalogue).Put(catKey, b) })
}

// Causes returns every cause with its counts, by name.
func (s *Store) Causes(ctx context.Context) ([]procedures.Cause, error) {
	var out []procedures.Cause
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bCauses).ForEach(func(k, v []byte) error {
			var c causeRecord
			if err := decode(v, &c, "cause"); err != nil {
				return err
			}
			out = append(out, procedures.Cause{Name: string(k), Description: c.Description, Procedures: c.Procedures, Frequency: c.Frequency})
			return nil
		})
	})
	return out, err
}

// Cause returns one cause and its procedures, by edge frequency desc, then
// name. Returns CodeNotFound.
func (s *Store) Cause(ctx context.Context, name string) (*procedures.Cause, []procedures.CauseProcedure, error) {
	var out *procedures.Cause
	var procs []procedures.CauseProcedure
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c, err := getCause(tx, name)
		if err != nil {
			return err
		}
		if c == nil {
			return procedures.Errorf(procedures.CodeNotFound, "no cause %q", name)
		}
		out = &procedures.Cause{Name: name, Description: c.Description, Procedures: c.Procedures, Frequency: c.Frequency}
		return scanPrefix(tx.Bucket(bEdgesCP), prefix(name), func(rest, v []byte) error {
			procs = append(procs, procedures.CauseProcedure{Name: string(rest), Frequency: int64(getU64(v))})
			return nil
		})
	})
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(procs, func(i, j int) bool { return procs[i].Frequency > procs[j].Frequency })
	return out, procs, nil
}
