package embedded

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
)

// A version's health vector lives in bHealth, apart from its record, so a
// run rewrites a few bytes, not the record with its code and schema (and
// the read path's decoded record stays valid: versionCache). A record
// written before keeps its vector in versionRecord.Health until it is
// rewritten; a bHealth entry wins.

// encodeHealth encodes v as varints.
func encodeHealth(v []int64) []byte {
	b := make([]byte, 0, 2*len(v))
	for _, x := range v {
		b = binary.AppendVarint(b, x)
	}
	return b
}

// decodeHealth decodes encodeHealth's bytes; false when they are not.
func decodeHealth(b []byte) ([]int64, bool) {
	out := make([]int64, 0, len(b))
	for len(b) > 0 {
		x, n := binary.Varint(b)
		if n <= 0 {
			return nil, false
		}
		out = append(out, x)
		b = b[n:]
	}
	return out, true
}

// healthOf is the health vector of the version under k: its bHealth
// entry raw (nil when none), else legacy, the one its record carries.
func healthOf(raw []byte, legacy []int64, k []byte) ([]int64, error) {
	if raw == nil {
		return legacy, nil
	}
	v, ok := decodeHealth(raw)
	if !ok {
		return nil, fault.Errorf(fault.CodeInternal, "embedded store: the stored health of version %q is corrupt", k)
	}
	return v, nil
}

// versionHealth is healthOf the version name, hash of r in tx.
func versionHealth(tx *bolt.Tx, k []byte, r *versionRecord) ([]int64, error) {
	return healthOf(tx.Bucket(bHealth).Get(k), r.Health, k)
}

// putHealth stores v as the health vector of the version under k (nil
// deletes it).
func putHealth(tx *bolt.Tx, k []byte, v []int64) error {
	if v == nil {
		return tx.Bucket(bHealth).Delete(k)
	}
	return tx.Bucket(bHealth).Put(k, encodeHealth(v))
}
