package embedded

import (
	"bytes"
	"context"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/procedures"
)

// loadProcedure assembles the procedure named name, with its current
// version, causes and grant; CodeNotFound when it does not exist.
func (s *Store) loadProcedure(tx *bolt.Tx, name string) (*procedures.Procedure, error) {
	return s.newProcReader(tx).load(name)
}

// procReader assembles procedures in one transaction, with the buckets it
// reads opened once and a cursor on each kept: a read transaction of bbolt
// seeks a bucket again on every Tx.Bucket, and Bucket.Get allocates a new
// cursor (and its stack) on every call, which were most of the time and of
// the allocations of a page of 25.
type procReader struct {
	*decodeCaches
	procs, versions, health, edgesPC, grants *bolt.Cursor
	buf                                      []byte // scratch for keys
}

func (s *Store) newProcReader(tx *bolt.Tx) *procReader {
	return &procReader{decodeCaches: &s.decodeCaches, procs: tx.Bucket(bProcs).Cursor(), versions: tx.Bucket(bVersions).Cursor(),
		health: tx.Bucket(bHealth).Cursor(), edgesPC: tx.Bucket(bEdgesPC).Cursor(), grants: tx.Bucket(bGrants).Cursor()}
}

// get is Bucket.Get through the cursor c: the value stored under k, nil
// when there is none (or k names a nested bucket).
func get(c *bolt.Cursor, k []byte) []byte {
	gk, v := c.Seek(k)
	if !bytes.Equal(gk, k) {
		return nil
	}
	return v
}

// key returns name, then a 0 byte and each of parts, in r's scratch
// buffer, valid until the next call.
func (r *procReader) key(name []byte, parts ...string) []byte {
	r.buf = append(r.buf[:0], name...)
	for _, p := range parts {
		r.buf = append(append(r.buf, 0), p...)
	}
	return r.buf
}

// exists reports whether a procedure named name is stored.
func (r *procReader) exists(name string) bool { return get(r.procs, []byte(name)) != nil }

// load is loadProcedure with r's buckets.
func (r *procReader) load(name string) (*procedures.Procedure, error) {
	return r.loadKey([]byte(name))
}

// loadKey is load of the name in bytes (which may be the database's own,
// as rank keys are: they stay valid for the transaction).
func (r *procReader) loadKey(name []byte) (*procedures.Procedure, error) {
	raw := get(r.procs, name)
	if raw == nil {
		return nil, noProcedure(string(name))
	}
	rec, err := r.procCache.Get(name, raw, "procedure")
	if err != nil {
		return nil, err
	}
	var cur *versionRecord
	var health []int64
	vkey := r.key(name, rec.Current)
	if vraw := get(r.versions, vkey); vraw != nil {
		if cur, err = r.versionCache.Get(vkey, vraw, "version"); err != nil {
			return nil, err
		}
		if health, err = healthOf(get(r.health, vkey), cur.Health, vkey); err != nil {
			return nil, err
		}
	}
	var causes []procedures.CauseLink
	p := r.key(name, "") // name and a 0 byte: every edge of the procedure
	for k, v := r.edgesPC.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = r.edgesPC.Next() {
		causes = append(causes, procedures.CauseLink{Name: string(k[len(p):]), Frequency: int64(getU64(v))})
	}
	if len(causes) > 1 {
		sort.SliceStable(causes, func(i, j int) bool { return causes[i].Frequency > causes[j].Frequency })
	}
	var g *procedures.Grant
	if v := get(r.grants, name); v != nil {
		g = new(procedures.Grant)
		if err := decode(v, g, "grant of "+rec.Name); err != nil {
			return nil, err
		}
		g.GrantedAt = g.GrantedAt.UTC()
	}
	return rec.procedure(cur, health, causes, g), nil
}

// Get returns the procedure named name. Returns CodeNotFound.
func (s *Store) Get(ctx context.Context, name string) (*procedures.Procedure, error) {
	var p *procedures.Procedure
	err := s.view(ctx, func(tx *bolt.Tx) (err error) {
		p, err = s.loadProcedure(tx, name)
		return err
	})
	return p, err
}

// GetMany returns the procedures among names that exist, by name.
func (s *Store) GetMany(ctx context.Context, names []string) (map[string]*procedures.Procedure, error) {
	out := make(map[string]*procedures.Procedure, len(names))
	err := s.view(ctx, func(tx *bolt.Tx) error {
		r := s.newProcReader(tx)
		for _, n := range names {
			if _, done := out[n]; done || !r.exists(n) {
				continue
			}
			p, err := r.load(n)
			if err != nil {
				return err
			}
			out[n] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReferencedProcedures returns the stored procedures that some procedure's
// signature names, by name.
func (s *Store) ReferencedProcedures(ctx context.Context) ([]*procedures.Procedure, error) {
	var out []*procedures.Procedure
	err := s.view(ctx, func(tx *bolt.Tx) error {
		r := s.newProcReader(tx)
		last := ""
		return tx.Bucket(bRefs).ForEach(func(k, _ []byte) error {
			ref, _, _ := strings.Cut(string(k), "\x00")
			if ref == last {
				return nil
			}
			last = ref
			if !r.exists(ref) {
				return nil
			}
			p, err := r.load(ref)
			if err == nil {
				out = append(out, p)
			}
			return err
		})
	})
	return out, err
}

// Versions returns the versions of a procedure, oldest first (by capture
// time, then code hash), with Current set. Returns CodeNotFound.
func (s *Store) Versions(ctx context.Context, name string) ([]procedures.Version, error) {
	var out []procedures.Version
	err := s.view(ctx, func(tx *bolt.Tx) error {
		rec, err := s.mustProc(tx, name)
		if err != nil {
			return err
		}
		return scanPrefix(tx.Bucket(bVersions), prefix(name), func(rest, v []byte) error {
			var r versionRecord
			if err := decode(v, &r, "version of "+name); err != nil {
				return err
			}
			if r.Health, err = versionHealth(tx, key(name, r.CodeHash), &r); err != nil {
				return err
			}
			out = append(out, r.version(r.CodeHash == rec.Current))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CapturedAt.Equal(out[j].CapturedAt) {
			return out[i].CapturedAt.Before(out[j].CapturedAt)
		}
		return out[i].CodeHash < out[j].CodeHash
	})
	return out, nil
}

// Version returns one version with its code. Returns CodeNotFound.
func (s *Store) Version(ctx context.Context, name, codeHash string) (*procedures.Version, error) {
	var out *procedures.Version
	err := s.view(ctx, func(tx *bolt.Tx) error {
		rec, err := s.mustProc(tx, name)
		if err != nil {
			return err
		}
		r, err := s.getVersion(tx, name, codeHash)
		if err != nil {
			return err
		}
		if r == nil {
			return noVersion(name, codeHash)
		}
		v := r.version(codeHash == rec.Current)
		out = &v
		return nil
	})
	return out, err
}
