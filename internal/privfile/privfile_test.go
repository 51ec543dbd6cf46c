package privfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCreateNeverOpensWhatExists: Create makes a new 0600-or-perm file
// even where a link is planted at every name a predictable scheme would
// pick; OpenMade refuses a link.
func TestCreateNeverOpensWhatExists(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "target")
	if err := os.Symlink(target, filepath.Join(dir, ".p.db.compact")); err != nil {
		t.Fatal(err)
	}
	f, made, err := Create(dir, ".p.db.compact-*", 0o640)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Lstat(f.Name()); err != nil || !os.SameFile(fi, made) || fi.Mode().Perm() != 0o640 {
		t.Fatalf("made %v %v", fi, err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("Create wrote through the planted link")
	}
	if g, err := OpenMade(filepath.Join(dir, ".p.db.compact"), os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		g.Close()
		t.Fatal("OpenMade opened a link")
	}
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("OpenMade created the link's target")
	}
}

// TestRenameChecksTheFileWritten: a temporary file replaced while it was
// written (by a link, or by another file) is not renamed into place.
func TestRenameChecksTheFileWritten(t *testing.T) {
	for _, swap := range []string{"link", "file"} {
		t.Run(swap, func(t *testing.T) {
			dir := t.TempDir()
			f, made, err := Create(dir, ".out-*", 0o600)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			other := filepath.Join(t.TempDir(), "other")
			if err := os.WriteFile(other, []byte("not what was written"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(f.Name()); err != nil {
				t.Fatal(err)
			}
			if swap == "link" {
				err = os.Symlink(other, f.Name())
			} else {
				err = os.Link(other, f.Name())
			}
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if err := Rename(f.Name(), made, out); err == nil {
				t.Fatal("a replaced file was renamed into place")
			}
			if _, err := os.Lstat(out); err == nil {
				t.Fatal("out exists")
			}
		})
	}
}
