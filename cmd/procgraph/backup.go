package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// cmdBackup saves GET /v1/backup: a consistent copy of a running server's
// embedded store file.
func cmdBackup(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("backup", "backup -o FILE",
		"Save a consistent copy of the running server's embedded store (GET /v1/backup: admin and grant, since the copy holds the recordings); restore it with procgraph restore.", false)
	out := cl.fs.String("o", "", "where the copy goes (written whole or not at all; required)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	if *out == "" {
		return cl.fail(s, "-o FILE is required")
	}
	resp, err := newClient(ctx).stream(ctx, "/v1/backup")
	if err != nil {
		return fail(s.err, "backup", err)
	}
	defer resp.Body.Close()
	w, commit, err := outputFile(*out, nil)
	if err != nil {
		return fail(s.err, "backup", err)
	}
	n, err := io.Copy(w, resp.Body)
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("the copy ended after %d of %d bytes", n, resp.ContentLength)
	}
	if err = commit(err); err != nil {
		return fail(s.err, "backup", err)
	}
	if err := checkStoreFile(ctx, *out); err != nil {
		_ = os.Remove(*out)
		return fail(s.err, "backup", fmt.Errorf("the copy is not a valid store (removed): %v", err))
	}
	fmt.Fprintf(s.out, "backed up %d bytes to %s (checked)\n", n, *out)
	return 0
}

// checkStoreFile opens the store file at path and runs its check; a file
// holding an unfinished import is refused (refuseUnfinishedImport). The
// search index that opening builds beside it (path.search) is removed
// again when it was not there before: a backup is one file.
func checkStoreFile(ctx context.Context, path string) error {
	index := embedded.SearchIndexPath(path)
	if _, err := os.Stat(index); errors.Is(err, os.ErrNotExist) {
		defer os.RemoveAll(index)
	}
	st, err := embedded.Open(path, embedded.Options{LockTimeout: time.Second})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := refuseUnfinishedImport(ctx, st, &serveConfig{Store: "embedded", Data: path}, "it is not taken as a store"); err != nil {
		return err
	}
	return st.Check(ctx)
}

// cmdRestore puts a backup in place of a stopped server's store file.
func cmdRestore(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("restore", "restore BACKUP [--data FILE]",
		"Replace the embedded store file with a backup (procgraph backup); the server must be stopped.", false)
	data := cl.fs.String("data", "./procgraph.db", "the embedded store file to replace")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	if err := checkStoreFile(ctx, pos[0]); err != nil {
		return fail(s.err, "restore", fmt.Errorf("%s is not a valid store backup: %v", pos[0], err))
	}
	if _, err := os.Stat(*data); err == nil {
		// Opening takes the file's lock: a running server holds it.
		st, err := embedded.Open(*data, embedded.Options{LockTimeout: time.Second})
		if err != nil {
			return fail(s.err, "restore", fmt.Errorf("%s is in use or unreadable (stop the server first): %v", *data, err))
		}
		_ = st.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(s.err, "restore", err)
	}
	src, err := os.Open(pos[0])
	if err != nil {
		return fail(s.err, "restore", err)
	}
	defer src.Close()
	// The old file's search index describes the old file (its generation
	// may even match the backup's): remove it first, so the next start
	// rebuilds it from the restored file.
	if err := os.RemoveAll(embedded.SearchIndexPath(*data)); err != nil {
		return fail(s.err, "restore", err)
	}
	var n int64
	// The restored file holds the audit record of its restore, written
	// before it is renamed into place: restored with it or not at all.
	w, commit, err := outputFileThen(*data, nil, func(tmp string) error { return recordRestore(ctx, tmp, n) })
	if err != nil {
		return fail(s.err, "restore", err)
	}
	n, err = io.Copy(w, src)
	if err = commit(err); err != nil {
		return fail(s.err, "restore", err)
	}
	fmt.Fprintf(s.out, "restored %s from %s\n", *data, filepath.Base(pos[0]))
	return 0
}

// recordRestore appends the audit record of a restore of n bytes
// (procedures.StoreDecision, reason restored) to the store file at path,
// leaving no search index beside it.
func recordRestore(ctx context.Context, path string, n int64) error {
	defer os.RemoveAll(embedded.SearchIndexPath(path))
	st, err := embedded.Open(path, embedded.Options{LockTimeout: time.Second})
	if err != nil {
		return err
	}
	_, err = procedures.NewRecorder(st, procedures.RecorderOptions{}).
		Record(ctx, procedures.StoreDecision(procedures.ReasonRestored, operator(), procedures.RestoreNote(n)))
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recording the restore in the audit log: %v", err)
	}
	return nil
}

// operator names who runs an offline command that changes a whole store,
// for its audit record: the login name and the machine, "user@host".
func operator() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		name += "@" + h
	}
	return name
}
