package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/recording"
)

// A recording is kept in bRecordings under name 0 hash 0 id: its time
// (u64 ms), its content hash (hex, 64 bytes), then its body
// (recording.EncodeRecordingBody).

// recHead is the length of a stored recording's time and content hash.
const recHead = 8 + 64

// putRecording keeps r as a recording of the version hash of name: it
// replaces the one of the same id unless its content is the same, then
// the version keeps its keep newest.
func putRecording(tx *bolt.Tx, name, hash string, r *recording.Recording, keep int) error {
	if r.CodeHash != hash {
		return invalid("recording", "the recording is of version %q, not %q", r.CodeHash, hash)
	}
	b := tx.Bucket(bRecordings)
	k := key(name, hash, r.ID)
	if len(r.ContentHash) != 64 {
		return invalid("recording", "the recording's content hash is malformed")
	}
	if old := b.Get(k); len(old) >= recHead && string(old[8:recHead]) == r.ContentHash {
		return nil // the same content: nothing to rewrite
	}
	body, err := recording.EncodeRecordingBody(r)
	if err != nil {
		return invalid("recording", "%v", err)
	}
	v := make([]byte, 0, recHead+len(body))
	v = append(append(append(v, u64(uint64(ms(r.RecordedAt)))...), r.ContentHash...), body...)
	if err := b.Put(k, v); err != nil {
		return err
	}
	return keepNewest(tx, name, hash, keep)
}

// loadRecording adds a dumped recording its version lacks (one of the same
// id is kept as the store holds it: docs/dumps.md "Merging"), then the
// version keeps its keep newest.
func (s *Store) loadRecording(tx *bolt.Tx, d *dump.RecordingRecord, keep int) error {
	r, err := d.Recording()
	if err != nil {
		return err
	}
	if err := checkPart("recording", r.ID); err != nil {
		return err
	}
	if ver, err := s.getVersion(tx, r.Procedure, r.CodeHash); err != nil || ver == nil {
		if err == nil {
			err = invalid("recording", "recording %s of version %s of %s, which is not loaded", r.ID, r.CodeHash, r.Procedure)
		}
		return err
	}
	k := key(r.Procedure, r.CodeHash, r.ID)
	if tx.Bucket(bRecordings).Get(k) != nil {
		return nil
	}
	return putRecording(tx, r.Procedure, r.CodeHash, r, keep)
}

// keepNewest deletes the recordings of the version hash of name past its
// keep newest (recorded_at, then id).
func keepNewest(tx *bolt.Tx, name, hash string, keep int) error {
	b := tx.Bucket(bRecordings)
	type entry struct {
		k  []byte
		at uint64
	}
	var all []entry
	p := key(name, hash, "")
	c := b.Cursor()
	for ck, v := c.Seek(p); ck != nil && bytes.HasPrefix(ck, p); ck, v = c.Next() {
		all = append(all, entry{append([]byte(nil), ck...), getU64(v[:min(8, len(v))])})
	}
	if len(all) <= keep {
		return nil
	}
	slices.SortFunc(all, func(a, b entry) int { // newest first: recorded_at, then id
		if a.at != b.at {
			return -cmpU64(a.at, b.at)
		}
		return -bytes.Compare(a.k, b.k)
	})
	for _, e := range all[keep:] {
		if err := b.Delete(e.k); err != nil {
			return err
		}
	}
	return nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Recordings returns a page of the procedure's recordings (see
// procedures.Store): it orders the keys of the procedure's (or the
// version's) recordings by the time each value starts with, and decodes
// only the page's bodies.
func (s *Store) Recordings(ctx context.Context, name, codeHash string, limit, offset int) ([]recording.Recording, int, error) {
	if err := checkPart("name", name); err != nil {
		return nil, 0, err
	}
	if limit < 0 || offset < 0 {
		return nil, 0, fault.Errorf(fault.CodeInvalid, "limit and offset must not be negative")
	}
	p := prefix(name)
	if codeHash != "" {
		p = prefix(name, codeHash)
	}
	type stored struct {
		hash, id string
		at       uint64
		v        []byte
	}
	out := []recording.Recording{}
	total := 0
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if _, err := s.mustProc(tx, name); err != nil {
			return err
		}
		var all []stored
		err := scanPrefix(tx.Bucket(bRecordings), p, func(rest, v []byte) error {
			if codeHash != "" {
				rest = append([]byte(codeHash+"\x00"), rest...)
			}
			hash, id, ok := strings.Cut(string(rest), "\x00")
			if !ok || len(v) < recHead {
				return fault.Errorf(fault.CodeInternal, "embedded store: a stored recording of %s is corrupt", name)
			}
			all = append(all, stored{hash: hash, id: id, at: binary.BigEndian.Uint64(v[:8]), v: v})
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortStableFunc(all, func(a, b stored) int {
			if c := cmpU64(b.at, a.at); c != 0 {
				return c
			}
			return strings.Compare(b.id, a.id)
		})
		total = len(all)
		all = all[min(offset, len(all)):]
		if limit > 0 && limit < len(all) {
			all = all[:limit]
		}
		out = out[:0]
		for _, st := range all {
			r := recording.Recording{ID: st.id, Procedure: name, CodeHash: st.hash, RecordedAt: fromMs(int64(st.at))}
			if err := recording.DecodeRecordingBody(st.v[recHead:], &r); err != nil {
				return fault.Errorf(fault.CodeInternal, "embedded store: recording %s of %s: %v", r.ID, name, err)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// DeleteRecordings deletes recordings (see procedures.Store).
func (s *Store) DeleteRecordings(ctx context.Context, name string, d *audit.Decision) (int, error) {
	if name != "" {
		if err := checkPart("name", name); err != nil {
			return 0, err
		}
	}
	if d != nil {
		if err := validateDecision(d); err != nil {
			return 0, err
		}
	}
	n := 0
	err := s.update(ctx, func(tx *bolt.Tx) error {
		n = 0
		p := []byte(nil)
		if name != "" {
			if _, err := s.mustProc(tx, name); err != nil {
				return err
			}
			p = prefix(name)
		}
		b := tx.Bucket(bRecordings)
		var keys [][]byte
		c := b.Cursor()
		for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
			keys = append(keys, append([]byte(nil), k...))
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(keys)
		if d != nil {
			return appendDecision(tx, *d)
		}
		return nil
	})
	return n, err
}

// SetVerification keeps a version's last verification (see
// procedures.Store).
func (s *Store) SetVerification(ctx context.Context, name, codeHash string, v recording.Verification) error {
	if err := checkPart("name", name); err != nil {
		return err
	}
	if why := v.Check(); why != "" {
		return invalid("verification", "%s", why)
	}
	v.At = fromMs(ms(v.At))
	return s.update(ctx, func(tx *bolt.Tx) error {
		if _, err := s.mustProc(tx, name); err != nil {
			return err
		}
		ver, err := s.mustVersion(tx, name, codeHash)
		if err != nil {
			return err
		}
		ver.Verification = &v
		return s.putVersion(tx, name, ver)
	})
}
