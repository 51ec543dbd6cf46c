package embedded

import (
	"bytes"
	"context"
	"sort"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// Catalogue returns the stored catalogue, or an empty one.
func (s *Store) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	var c *procedures.Catalogue
	err := s.view(ctx, func(tx *bolt.Tx) (err error) {
		c, err = s.catalogueIn(tx)
		return err
	})
	return c, err
}

// catalogueIn reads the stored catalogue in tx, or an empty one, through
// the store's memo.
func (s *Store) catalogueIn(tx *bolt.Tx) (*procedures.Catalogue, error) {
	v := tx.Bucket(bCatalogue).Get(catKey)
	if v == nil {
		return emptyCatalogue()
	}
	return s.catalogues.get(v)
}

// emptyCatalogue is the catalogue before one is put, made once (its
// revision is a hash) and shared as every Catalogue is. It is a constant
// made lazily, not a cache of stored data: the same for every store.
var emptyCatalogue = sync.OnceValues(func() (*procedures.Catalogue, error) { return procedures.NewCatalogue(nil) })

// catalogueCache keeps a store's last catalogue decoded, with its stored
// bytes: every find and classification reads the catalogue, which changes
// rarely. A Catalogue is not modified after NewCatalogue, so it is shared.
// Each Store has its own (Store.catalogues).
type catalogueCache struct {
	mu  sync.Mutex
	raw []byte
	cat *procedures.Catalogue
}

func (cc *catalogueCache) get(raw []byte) (*procedures.Catalogue, error) {
	cc.mu.Lock()
	if cc.cat != nil && bytes.Equal(cc.raw, raw) {
		c := cc.cat
		cc.mu.Unlock()
		return c, nil
	}
	cc.mu.Unlock()
	rec := new(catalogueRecord)
	if err := decode(raw, rec, "catalogue"); err != nil {
		return nil, err
	}
	c, err := procedures.ReadCatalogue(rec.Tools)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInternal, "embedded store: stored catalogue is invalid: %v", err)
	}
	c.Revision = rec.Revision
	cc.mu.Lock()
	cc.raw, cc.cat = bytes.Clone(raw), c
	cc.mu.Unlock()
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
	return s.update(ctx, func(tx *bolt.Tx) error {
		old, err := s.catalogueIn(tx)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bCatalogue).Put(catKey, b); err != nil {
			return err
		}
		if err := bumpAuth(tx); err != nil {
			return err
		}
		affected, err := procedures.Affected(txClasses{s, tx}, procedures.ChangedTools(old, valid))
		if err != nil {
			return err
		}
		return s.reclassify(tx, affected)
	})
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
			return fault.Errorf(fault.CodeNotFound, "no cause %q", name)
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
