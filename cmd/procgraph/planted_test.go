package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/graph/embedded"
)

// otherUID is the user the tests that need two users run the victim's
// command as (nobody); the test itself, root, plants the links.
const otherUID = 65534

// asOtherUser runs the procgraph CLI (a copy of this test binary that
// otherUID may execute) as otherUID, and returns its exit code and output.
// It skips the test unless it runs as root.
func asOtherUser(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := otherUserCommand(t, nil, args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), buf.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, buf.String()
}

// otherUserCommand is this test binary (a copy otherUID may execute) as a
// command of otherUID with the CLI's environment and env: as procgraph,
// or in the mode env asks for. It skips the test unless it runs as root.
func otherUserCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: the store's owner and the user who plants a link are two users")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := sharedDir(t, 0o755)
	cp := filepath.Join(dir, "procgraph")
	in, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(cp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cp, args...)
	cmd.Env = append([]string{runMainEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + dir}, env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	return cmd
}

// sharedDir is a new directory of mode perm (1777: a shared sticky
// directory, as /tmp) whose parents otherUID may traverse.
func sharedDir(t *testing.T, perm os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompactIgnoresAPlantedLink is the review's scenario: a store in a
// shared sticky directory belongs to one user (the victim, otherUID);
// another user has planted a link where compact used to write its copy
// (.NAME.compact), pointing to a place of that user's choosing. The
// victim's `procgraph compact` must not write there (before: the copy of
// the store, owned by the victim, landed at the link's target), and
// compacts the store.
func TestCompactIgnoresAPlantedLink(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the store's owner and the user who plants a link are two users")
	}
	shared := sharedDir(t, 0o777|os.ModeSticky)
	data := filepath.Join(shared, "p.db")
	st, err := embedded.Open(data, embedded.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{data, embedded.SearchIndexPath(data)} {
		_ = filepath.Walk(p, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, otherUID, otherUID) })
	}
	elsewhere := sharedDir(t, 0o777)
	stolen := filepath.Join(elsewhere, "stolen.db")
	planted := filepath.Join(shared, ".p.db.compact")
	if err := os.Symlink(stolen, planted); err != nil {
		t.Fatal(err)
	}

	code, out := asOtherUser(t, "compact", "--data", data)
	if _, err := os.Lstat(stolen); err == nil {
		t.Fatalf("compact wrote the store's copy at the planted link's target (exit %d):\n%s", code, out)
	}
	if code != 0 {
		t.Fatalf("compact: exit %d\n%s", code, out)
	}
	if fi, err := os.Lstat(planted); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the planted link was touched: %v %v", fi, err)
	}
	if fi, err := os.Lstat(data); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the store is no longer a regular file: %v %v", fi, err)
	}
	st, err = embedded.Open(data, embedded.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatalf("the compacted store: %v", err)
	}
	_ = st.Close()
}
