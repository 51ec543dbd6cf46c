package embedded

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	st "github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

var ctx = context.Background()

func mustOpen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// update runs fn in a write transaction on the closed store file at path.
func update(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// view runs fn in a read transaction on the closed store file at path,
// opened read-only.
func view(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(fn); err != nil {
		t.Fatal(err)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s := mustOpen(t, path)
	sig := []string{"tool_a", "tool_b"}
	name := st.NameOf(sig...)
	st.MustCapture(t, s, st.WithCause(st.In(sig, "h1", "k1", st.At(0)), "c1", "desc"))
	st.MustCapture(t, s, st.In(sig, "h2", "k2", st.At(1)))
	st.MustRecordUse(t, s, procedures.UseInput{Name: name, UsageKey: "k3", Replay: true, At: st.At(2)})
	if _, err := s.Promote(ctx, name, "h2", st.Decision(audit.KindPromote, name, "h2", st.At(3))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetGrant(ctx, name, &procedures.Grant{Enabled: true, GrantedBy: "op", GrantedAt: st.At(4)}, "h2", nil, st.Decision(audit.KindGrant, name, "h2", st.At(4))); err != nil {
		t.Fatal(err)
	}
	cat, _ := procedures.NewCatalogue([]procedures.Tool{{Name: "tool_a", ReadOnly: true}})
	if err := s.PutCatalogue(ctx, cat); err != nil {
		t.Fatal(err)
	}
	before := st.MustGet(t, s, name)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, path)
	after := st.MustGet(t, s, name)
	if after.CodeHash != "h2" || after.Frequency != before.Frequency || after.UseCount != 1 || after.Grant == nil ||
		len(after.Causes) != 1 || !after.LastUsedAt.Equal(*before.LastUsedAt) || !after.CreatedAt.Equal(before.CreatedAt) {
		t.Errorf("after reopen: %+v\nbefore: %+v", after, before)
	}
	if ds := st.MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 2 {
		t.Errorf("decisions after reopen = %d", len(ds))
	}
	if c, err := s.Catalogue(ctx); err != nil || c.Revision != cat.Revision {
		t.Errorf("catalogue after reopen = %v, %v", c, err)
	}
	if _, total := st.MustFind(t, s, procedures.Query{}); total != 1 {
		t.Errorf("total after reopen = %d", total)
	}
	// A known usage key still counts once.
	if res := st.MustCapture(t, s, st.In(sig, "h1", "k1", st.At(5))); res.Counted {
		t.Error("a usage key was counted twice across a reopen")
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLockedFileIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	mustOpen(t, path)
	start := time.Now()
	_, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
	e := st.RequireCode(t, err, fault.CodeUnavailable)
	if !strings.Contains(e.Message, "locked by another process") {
		t.Errorf("message = %q", e.Message)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Open waited %v", d)
	}
}

func TestClosedAndCancelled(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := s.Capture(cctx, st.In([]string{"a", "b"}, "h", "k", st.At(0)))
	st.RequireCode(t, err, fault.CodeUnavailable)
	if _, total := st.MustFind(t, s, procedures.Query{}); total != 0 {
		t.Error("a cancelled capture wrote")
	}
}

func TestMalformedFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := make([]byte, 64<<10)
	_, _ = rand.Read(garbage)
	cases := map[string]func(path string){
		"random bytes": func(path string) { _ = os.WriteFile(path, garbage, 0o600) },
		"text":         func(path string) { _ = os.WriteFile(path, []byte("not a database\n"), 0o600) },
		"truncated": func(path string) {
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			b, _ := os.ReadFile(path)
			_ = os.WriteFile(path, b[:100], 0o600)
		},
		"foreign bbolt file": func(path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
			_ = db.Close()
		},
		"newer schema": func(path string) {
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_ = s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(metaSchema, []byte("99")) })
			_ = s.Close()
		},
	}
	for name, make := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".db")
			make(path)
			_, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
			e := st.RequireCode(t, err, fault.CodeUnavailable)
			if !strings.Contains(e.Message, path) {
				t.Errorf("message %q does not name the file", e.Message)
			}
			t.Log(e.Message)
		})
	}
}

// TestCorruptPagesDoNotPanic wrecks pages of a valid file (keeping the two
// meta pages): every call must return, an error or not, never panic.
func TestCorruptPagesDoNotPanic(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	s, err := Open(src, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st.Fill(t, s, 300)
	_ = s.Close()
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(orig) / page
	wrecks := map[string]func(p int) bool{
		"all data pages":   func(p int) bool { return true },
		"every third page": func(p int) bool { return p%3 == 0 },
		"one page":         func(p int) bool { return p == pages/2 },
	}
	for name, wreck := range wrecks {
		t.Run(name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			for p := 2; p < pages; p++ {
				if wreck(p) {
					_, _ = rand.Read(b[p*page : (p+1)*page])
				}
			}
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".db")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
			if err != nil {
				st.RequireCode(t, err, fault.CodeUnavailable)
				t.Logf("Open: %.200v", err)
				return
			}
			defer s.Close()
			_, _, err = s.Find(ctx, procedures.Query{Limit: 5})
			t.Logf("Find: %.200v", err)
			_, err = s.Capture(ctx, st.In([]string{"a", "b"}, "h", "k", st.At(0)))
			t.Logf("Capture: %.200v", err)
			if err := s.Check(ctx); err == nil {
				t.Error("Check passed on a wrecked file")
			} else {
				t.Logf("Check: %.200v", err)
			}
		})
	}
}

func TestInputsThatDoNotFitKeys(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	for _, in := range []procedures.CaptureInput{
		st.In([]string{"a\x00b", "c"}, "h", "k", st.At(0)),
		st.WithCause(st.In([]string{"a", "b"}, "h", "k", st.At(0)), "bad\x00cause", ""),
		st.In([]string{"a", "b"}, strings.Repeat("h", maxPart+1), "k", st.At(0)),
	} {
		_, err := s.Capture(ctx, in)
		st.RequireCode(t, err, fault.CodeInvalid)
	}
}

func TestSignatureMismatchIsConflict(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	in := st.In([]string{"a", "b"}, "h", "k", st.At(0))
	st.MustCapture(t, s, in)
	in.Signature = []string{"a", "c"}
	_, err := s.Capture(ctx, in)
	st.RequireCode(t, err, fault.CodeConflict)
}

// TestBatchedWritesKeepErrorsApart races failing and succeeding captures:
// concurrent writers share bbolt batches, and a failing one must fail alone.
func TestBatchedWritesKeepErrorsApart(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	sig := []string{"a", "b"}
	st.MustCapture(t, s, st.In(sig, "h", "k0", st.At(0)))
	const n = 32
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Go(func() {
			in := st.In(sig, "h", fmt.Sprintf("k%d", i+1), st.At(i))
			if i%2 == 1 {
				in.Signature = []string{"a", "c"} // same name, other signature: a conflict
			}
			_, errs[i] = s.Capture(ctx, in)
		})
	}
	wg.Wait()
	for i, err := range errs {
		want := fault.Code("")
		if i%2 == 1 {
			want = fault.CodeConflict
		}
		if got := fault.ErrorCode(err); got != want {
			t.Errorf("capture %d: %v, want code %q", i, err, want)
		}
	}
	if p := st.MustGet(t, s, st.NameOf(sig...)); p.Frequency != 1+n/2 {
		t.Errorf("frequency = %d, want %d", p.Frequency, 1+n/2)
	}
}

// TestOpenCorruptRecordIsUnavailable: a record Open's upgrades must read
// (a version without its canonical hash) that is not JSON makes the file
// unavailable, as a corrupt page does, not an internal error.
func TestOpenCorruptRecordIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st.MustCapture(t, s, st.In([]string{"tool_a", "tool_b"}, "h1", "k1", st.At(0)))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	update(t, path, func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bVersions).Cursor().First()
		if err := tx.Bucket(bVersions).Put(k, []byte("G\x00not json")); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Delete(metaCanonical)
	})
	_, err = Open(path, Options{NoSync: true})
	st.RequireCode(t, err, fault.CodeUnavailable)
}
