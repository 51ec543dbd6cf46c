package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// TestCompactKeepsEveryRecord: a store filled in large batches (which
// leave free pages) compacts to a file holding every bucket, key, value and
// sequence it held, and fewer free pages; it opens and serves as before,
// its search index included.
func TestCompactKeepsEveryRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	storetest.SparseFill(t, s, 4_000, 500)
	terms, err := search.Terms(storetest.SparseB)
	if err != nil {
		t.Fatal(err)
	}
	query := procedures.Query{Search: terms, Limit: 5}
	found, _, err := s.Find(context.Background(), query)
	if err != nil || len(found) == 0 {
		t.Fatalf("search before compacting: %d, %v", len(found), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// bbolt's own structure the store does not use today: a nested bucket
	// and sequences, copied as they are.
	update(t, path, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("zz_outer"))
		if err != nil {
			return err
		}
		inner, err := b.CreateBucket([]byte("inner"))
		if err == nil {
			err = errors.Join(b.SetSequence(42), inner.SetSequence(7), inner.Put([]byte("k"), []byte("v")))
		}
		return err
	})
	before := mustDumpBolt(t, path)
	res, err := Compact(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if after := mustDumpBolt(t, path); !bytes.Equal(after, before) {
		t.Fatalf("the compacted file holds other records (%d bytes of dump, want %d)", len(after), len(before))
	}
	if res.FreePagesBefore == 0 || res.BytesAfter >= res.BytesBefore {
		t.Fatalf("compacted %+v: want free pages before and a smaller file", res)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	free := db.Stats().FreePageN
	_ = db.Close()
	if free >= res.FreePagesBefore {
		t.Fatalf("free pages %d after, %d before", free, res.FreePagesBefore)
	}
	s, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("check after compacting: %v", err)
	}
	ps, _, err := s.Find(context.Background(), query)
	if err != nil || !slices.Equal(names(ps), names(found)) {
		t.Fatalf("search after compacting: %v, %v; before %v", names(ps), err, names(found))
	}
	t.Logf("%+v, %d free pages after", res, free)
}

// TestCompactRefusesWhatItCannotCopy: a store a process holds open, a
// missing file, a file that is not a bbolt file and a bbolt file that is
// not a procgraph store each get a clear error, and the file is left as it
// was.
func TestCompactRefusesWhatItCannotCopy(t *testing.T) {
	dir := t.TempDir()
	inUse := filepath.Join(dir, "in-use.db")
	s, err := Open(inUse, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a store "), 2000), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	db, err := bolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err }); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	for _, tc := range []struct {
		name, path string
		code       fault.Code
	}{
		{"held by a server", inUse, fault.CodeUnavailable},
		{"missing", filepath.Join(dir, "none.db"), fault.CodeNotFound},
		{"not a bbolt file", garbage, fault.CodeUnavailable},
		{"not a procgraph store", foreign, fault.CodeUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.path)
			_, err := Compact(context.Background(), tc.path, 100*time.Millisecond)
			if fault.ErrorCode(err) != tc.code {
				t.Fatalf("Compact: %v (code %q), want code %q", err, fault.ErrorCode(err), tc.code)
			}
			if after, _ := os.ReadFile(tc.path); !bytes.Equal(after, before) {
				t.Fatal("the file changed")
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*.compact")); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// mustDumpBolt is every bucket of the bbolt file at path, its sequence,
// keys and values, in order, as bytes to compare.
func mustDumpBolt(tb testing.TB, path string) []byte {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var out bytes.Buffer
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		fmt.Fprintf(&out, "bucket %q seq %d\n", prefix, b.Sequence())
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+"/"+string(k), b.Bucket(k))
			}
			fmt.Fprintf(&out, "%q=%q\n", k, v)
			return nil
		})
	}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name), b) })
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

func names(ps []*procedures.Procedure) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
