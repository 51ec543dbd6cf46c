package embedded

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// TestHealthOutsideTheRecord: a run writes the version's health to
// bHealth and leaves its record's bytes alone (the read path keeps its
// decoded record); a record written before, its health inside it, is read
// with that health, and its next run continues from it; a corrupt vector
// is an error naming the version, never a panic or a silent zero.
func TestHealthOutsideTheRecord(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sig := []string{"tool_a", "tool_b"}
	name := storetest.NameOf(sig...)
	storetest.MustCapture(t, s, storetest.In(sig, "h1", "k1", storetest.At(0)))
	k := key(name, "h1")
	recordBytes := func() []byte {
		var b []byte
		_ = s.db.View(func(tx *bolt.Tx) error { b = append([]byte(nil), tx.Bucket(bVersions).Get(k)...); return nil })
		return b
	}
	before := recordBytes()
	run := func(key, failure string) {
		t.Helper()
		storetest.MustRecordUse(t, s, procedures.UseInput{Name: name, UsageKey: key, Replay: failure == "", At: storetest.At(5),
			Run: &health.Run{Failure: failure, Duration: time.Millisecond, At: storetest.At(5)}})
	}
	run("k1", "")
	run("k2", health.FailureTimeout)
	if after := recordBytes(); !reflect.DeepEqual(before, after) {
		t.Fatalf("runs rewrote the version record:\n%s\n%s", before, after)
	}
	if h := storetest.MustGet(t, s, name).Health; h.Runs != 2 || h.Failed != 1 {
		t.Fatalf("health = %+v, want 2 runs, 1 failed", h)
	}

	// A record written before bHealth: its vector inside it, no entry.
	legacy := health.Health{Runs: 7, Succeeded: 7}.Vector()
	err = s.db.Update(func(tx *bolt.Tx) error {
		var r versionRecord
		if err := decode(tx.Bucket(bVersions).Get(k), &r, "version"); err != nil {
			return err
		}
		r.Health = legacy
		b, err := encode(&r)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bVersions).Put(k, b); err != nil {
			return err
		}
		return tx.Bucket(bHealth).Delete(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	if h := storetest.MustGet(t, s, name).Health; h.Runs != 7 {
		t.Fatalf("a record's own health reads as %+v, want 7 runs", h)
	}
	if vs, err := s.Versions(ctx, name); err != nil || vs[0].Health.Runs != 7 {
		t.Fatalf("Versions = %+v, %v; want 7 runs", vs, err)
	}
	run("k3", "")
	if h := storetest.MustGet(t, s, name).Health; h.Runs != 8 || h.Succeeded != 8 {
		t.Fatalf("after a run the legacy health is %+v, want 8 runs", h)
	}

	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bHealth).Put(k, []byte{0xff}) }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, name); err == nil {
		t.Fatal("a corrupt health vector read without an error")
	}
}

// FuzzDecodeHealth: decodeHealth never panics, and what it accepts
// encodes back to the same bytes.
func FuzzDecodeHealth(f *testing.F) {
	f.Add(encodeHealth(health.Health{Runs: 3, Succeeded: 2, Failed: 1}.Vector()))
	f.Add([]byte{})
	f.Add([]byte{0xff})
	f.Add([]byte{0x80, 0x80, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := decodeHealth(b)
		if !ok {
			return
		}
		if got := encodeHealth(v); string(got) != string(b) && len(b) > 0 {
			// Varints have one encoding per value except overlong forms,
			// which decode: the round trip of the decoded vector is stable.
			if again, ok := decodeHealth(got); !ok || !reflect.DeepEqual(again, v) {
				t.Fatalf("%x decodes to %v, which encodes to %x and decodes to %v", b, v, got, again)
			}
		}
	})
}
