// Package privfile writes a file beside another where no one else's link
// can send it (docs/design.md, trust model 7): a private temporary file
// created exclusively in the target's directory (O_EXCL, a random name,
// mode 0600), reopened only without following links, and checked to be
// the same file (its inode) before it is renamed into place. A predictable
// name opened with O_CREATE follows a link another user planted in a
// shared directory; O_EXCL never opens what exists.
package privfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Create creates a new file in dir, exclusively, named by pattern as
// os.CreateTemp names it, with mode perm; it returns the open file and
// what it is (for Same and Rename).
func Create(dir, pattern string, perm os.FileMode) (*os.File, os.FileInfo, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = f.Chmod(perm)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenMade opens again a file Create made (bbolt's Options.OpenFile): never
// created here, never through a link.
func OpenMade(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, (flag&^os.O_CREATE)|syscall.O_NOFOLLOW, perm)
}

// Same checks that name is still the file made: a regular file, not a
// link, the same inode.
func Same(name string, made os.FileInfo) error {
	fi, err := os.Lstat(name)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || !os.SameFile(fi, made) {
		return fmt.Errorf("%s was replaced while it was written", filepath.Base(name))
	}
	return nil
}

// Rename renames tmp, the file made, to path, once Same says it is still
// that file.
func Rename(tmp string, made os.FileInfo, path string) error {
	if err := Same(tmp, made); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
