package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// classBits are the fields of procedures.ClassFields that the embedded
// class key (and a rank summary) holds as bits of its first byte, the first
// the lowest: the Status (set: StatusSucceeded) and the flags. classCounts
// are the others, the counts, each a uvarint after that byte in the key.
var classBits, classCounts = embeddedClassFields(procedures.ClassFields)

// classOfFlags is the Class of each value of the flags byte, its counts
// zero: decoding a flags byte is one look-up.
var classOfFlags = classesOfFlags()

// embeddedClassFields splits fields into classBits and classCounts. It
// panics when the flags do not fit in a byte, or when the counts are not
// the number of tools alone: a rank summary holds no count but the
// signature, whose length it is (summary.class).
func embeddedClassFields(fields []procedures.ClassField) (bits, counts []procedures.ClassField) {
	for _, f := range fields {
		if f.Count != nil {
			counts = append(counts, f)
		} else {
			bits = append(bits, f)
		}
	}
	if len(bits) > 8 {
		panic(fmt.Sprintf("embedded store: %d class flags do not fit in the class key's flags byte", len(bits)))
	}
	if len(counts) != 1 || counts[0].Name != "Tools" {
		panic("embedded store: a rank summary counts only the tools of its signature; encode the new class count in it")
	}
	return bits, counts
}

// classesOfFlags decodes every flags byte by classBits.
func classesOfFlags() (out [256]procedures.Class) {
	for f := range out {
		for i, b := range classBits {
			set := f&(1<<i) != 0
			switch {
			case b.Status == nil:
				*b.Flag(&out[f]) = set
			case set:
				*b.Status(&out[f]) = procedures.StatusSucceeded
			default:
				*b.Status(&out[f]) = procedures.StatusFailed
			}
		}
	}
	return out
}

// classFlags encodes c's Status and flags (classBits).
func classFlags(c procedures.Class) byte {
	var f byte
	for i, b := range classBits {
		if b.Status == nil && *b.Flag(&c) || b.Status != nil && *b.Status(&c) == procedures.StatusSucceeded {
			f |= 1 << i
		}
	}
	return f
}

// classKey is c's key in the classes bucket: flags, then the counts.
func classKey(c procedures.Class) []byte {
	k := []byte{classFlags(c)}
	for _, n := range classCounts {
		k = binary.AppendUvarint(k, uint64(*n.Count(&c)))
	}
	return k
}

func decodeClassKey(k []byte) (procedures.Class, bool) {
	if len(k) < 1+len(classCounts) {
		return procedures.Class{}, false
	}
	c := classOfFlags[k[0]]
	rest := k[1:]
	for _, n := range classCounts {
		v, w := binary.Uvarint(rest)
		if w <= 0 {
			return procedures.Class{}, false
		}
		*n.Count(&c) = int(v)
		rest = rest[w:]
	}
	if len(rest) != 0 {
		return procedures.Class{}, false
	}
	return c, true
}

// countClass adds delta to the number of procedures of class c, and to
// the number of procedures of class c calling each tool of sig (the
// procedure's signature, each distinct tool once): the counts Find's
// totals read.
func countClass(tx *bolt.Tx, c procedures.Class, sig []string, delta int64) error {
	k := classKey(c)
	if err := addCount(tx.Bucket(bClasses), k, delta); err != nil {
		return fault.Errorf(fault.CodeInternal, "embedded store: class %+v: %v", c, err)
	}
	tools := tx.Bucket(bToolClasses)
	for i, t := range sig {
		if slices.Contains(sig[:i], t) {
			continue
		}
		if err := addCount(tools, append(prefix(t), k...), delta); err != nil {
			return fault.Errorf(fault.CodeInternal, "embedded store: tool %s in class %+v: %v", t, c, err)
		}
	}
	return nil
}

// addCount adds delta to the count under k in b (deleted at zero).
func addCount(b *bolt.Bucket, k []byte, delta int64) error {
	n := int64(getU64(b.Get(k))) + delta
	switch {
	case n < 0:
		return errors.New("counted below zero")
	case n == 0:
		return b.Delete(k)
	}
	return b.Put(k, u64(uint64(n)))
}

// matchingTotal is the number of procedures whose class q matches: a sum
// over the maintained class counts, whatever the number of procedures.
func matchingTotal(tx *bolt.Tx, q *procedures.Query) int {
	total := 0
	_ = tx.Bucket(bClasses).ForEach(func(k, v []byte) error {
		if c, ok := decodeClassKey(k); ok && q.Match(c) {
			total += int(getU64(v))
		}
		return nil
	})
	return total
}

// toolTotal returns the number of procedures calling tool (all), and of
// those whose class q's summary filters match: sums over the maintained
// per-tool class counts, whatever the number of procedures.
func toolTotal(tx *bolt.Tx, tool string, q *procedures.Query) (all, matching int) {
	_ = scanPrefix(tx.Bucket(bToolClasses), prefix(tool), func(k, v []byte) error {
		n := int(getU64(v))
		all += n
		if c, ok := decodeClassKey(k); ok && q.Match(c) {
			matching += n
		}
		return nil
	})
	return all, matching
}

// resetClassCounts empties the class and per-tool class counts: the caller
// counts every procedure again (reclassifyNames).
func resetClassCounts(tx *bolt.Tx) error {
	for _, b := range [][]byte{bClasses, bToolClasses} {
		if err := tx.DeleteBucket(b); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
			return err
		}
		if _, err := tx.CreateBucket(b); err != nil {
			return err
		}
	}
	return nil
}

// countToolsAll builds the per-tool class counts from the rank entries: a
// file written before they were kept (schemaNoToolCounts).
func countToolsAll(tx *bolt.Tx) error {
	if err := tx.DeleteBucket(bToolClasses); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
		return err
	}
	tools, err := tx.CreateBucket(bToolClasses)
	if err != nil {
		return err
	}
	want, err := toolCountsOfRank(tx)
	if err != nil {
		return err
	}
	for k, n := range want {
		if err := tools.Put([]byte(k), u64(n)); err != nil {
			return err
		}
	}
	return nil
}

// toolCountsOfRank counts the procedures of each tool and class from the
// rank entries' summaries (their class and signature).
func toolCountsOfRank(tx *bolt.Tx) (map[string]uint64, error) {
	want := map[string]uint64{}
	var s summary
	err := tx.Bucket(bRank).ForEach(func(k, v []byte) error {
		if !decodeSummary(v, &s) {
			return fmt.Errorf("rank entry %q: summary does not decode", rankName(k))
		}
		ck := classKey(s.class())
		for i, t := range s.sig {
			if slices.ContainsFunc(s.sig[:i], func(u []byte) bool { return string(u) == string(t) }) {
				continue
			}
			want[string(append(append(append([]byte(nil), t...), 0), ck...))]++
		}
		return nil
	})
	return want, err
}

// txClasses reads what procedures.Reclassify needs inside a transaction of
// store s (whose catalogue memo it reads through).
type txClasses struct {
	s  *Store
	tx *bolt.Tx
}

func (r txClasses) Catalogue() (*procedures.Catalogue, error) { return r.s.catalogueIn(r.tx) }

func (r txClasses) Procedures(names []string) (map[string]procedures.Nested, error) {
	out := make(map[string]procedures.Nested, len(names))
	for _, n := range names {
		rec, err := r.s.getProc(r.tx, n)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			out[n] = procedures.Nested{Signature: rec.Signature, Retired: rec.Retired != nil}
		}
	}
	return out, nil
}

func (r txClasses) Callers(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		err := scanPrefix(r.tx.Bucket(bToolProcs), prefix(n), func(rest, _ []byte) error {
			out = append(out, string(rest))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reclassify recomputes and keeps the classification of the procedures
// among names (procedures.Reclassify), moving their class counts.
func (s *Store) reclassify(tx *bolt.Tx, names []string) error {
	cs, err := procedures.Reclassify(txClasses{s, tx}, names)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(cs)) {
		c := cs[name]
		rec, err := s.mustProc(tx, name)
		if err != nil {
			return err
		}
		if rec.ReadOnly == c.ReadOnly && rec.Problem == c.Problem {
			continue
		}
		rec.ReadOnly, rec.Problem = c.ReadOnly, c.Problem
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
	}
	return nil
}

// reclassifyAll recomputes every procedure's classification and rebuilds
// the class counts: a file written before they were kept.
func (s *Store) reclassifyAll(tx *bolt.Tx) error {
	if err := resetClassCounts(tx); err != nil {
		return err
	}
	var names []string
	err := tx.Bucket(bProcs).ForEach(func(k, _ []byte) error {
		names = append(names, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	return s.reclassifyNames(tx, names)
}

// reclassifyNames classifies the procedures names afresh, writing their
// rank entries anew so that they are counted in the class counts (which
// the caller has rebuilt or is rebuilding): a file written before the
// classes were kept, or procedures just loaded from a dump.
func (s *Store) reclassifyNames(tx *bolt.Tx, names []string) error {
	cs, err := procedures.Reclassify(txClasses{s, tx}, names)
	if err != nil {
		return err
	}
	for _, name := range names {
		rec, err := s.mustProc(tx, name)
		if err != nil {
			return err
		}
		c := cs[name]
		rec.ReadOnly, rec.Problem = c.ReadOnly, c.Problem
		cur, err := s.getVersion(tx, name, rec.Current)
		if err != nil {
			return err
		}
		if cur == nil {
			return fault.Errorf(fault.CodeInvalid, "procedure %s: its current version %s is missing", name, rec.Current)
		}
		// The rank entry is rewritten from scratch: its old summary is
		// not counted in the rebuilt classes.
		if rk := tx.Bucket(bRankByName).Get([]byte(name)); rk != nil {
			if err := tx.Bucket(bRank).Delete(rk); err != nil {
				return err
			}
		}
		if err := putProc(tx, rec, cur); err != nil {
			return err
		}
	}
	return nil
}

// checkClasses verifies that the class counts and the per-tool class
// counts are those of the rank entries.
func checkClasses(tx *bolt.Tx) error {
	want := map[string]uint64{}
	var s summary
	err := tx.Bucket(bRank).ForEach(func(k, v []byte) error {
		if !decodeSummary(v, &s) {
			return fmt.Errorf("rank entry %q: summary does not decode", rankName(k))
		}
		want[string(classKey(s.class()))]++
		return nil
	})
	if err != nil {
		return err
	}
	got := map[string]uint64{}
	_ = tx.Bucket(bClasses).ForEach(func(k, v []byte) error {
		got[string(k)] = getU64(v)
		return nil
	})
	if !maps.Equal(got, want) {
		return fmt.Errorf("class counts %v, rank entries say %v", got, want)
	}
	wantTools, err := toolCountsOfRank(tx)
	if err != nil {
		return err
	}
	gotTools := map[string]uint64{}
	_ = tx.Bucket(bToolClasses).ForEach(func(k, v []byte) error {
		gotTools[string(k)] = getU64(v)
		return nil
	})
	keys := map[string]bool{}
	for k := range gotTools {
		keys[k] = true
	}
	for k := range wantTools {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if gotTools[k] != wantTools[k] {
			tool, ck, _ := strings.Cut(k, "\x00")
			c, _ := decodeClassKey([]byte(ck))
			return fmt.Errorf("tool %s, class %+v: counted %d, rank entries say %d", tool, c, gotTools[k], wantTools[k])
		}
	}
	return nil
}
