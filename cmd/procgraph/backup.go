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

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// cmdBackup saves GET /v1/backup: a consistent copy of a running server's
// embedded store file; with --store, a backup of a store taken offline
// (backupOffline).
func cmdBackup(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("backup", "backup -o FILE | backup --store neo4j|embedded [--data FILE] -o FILE",
		"Save a consistent copy of the running server's embedded store (GET /v1/backup: admin and grant, since the copy holds the recordings); restore it with procgraph restore. With --store, back up a store offline instead: neo4j (NEO4J_* env) as a dump with its recordings, checked whole; embedded (--data, a stopped server's file) as a copy of the file.", false)
	out := cl.fs.String("o", "", "where the copy goes (written whole or not at all; required)")
	store := cl.fs.String("store", "", "back up this store offline instead of the running server's: neo4j (the database at NEO4J_URI) or embedded (--data)")
	data := cl.fs.String("data", "./procgraph.db", "with --store embedded: the store file (the server stopped)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	if *out == "" {
		return cl.fail(s, "-o FILE is required")
	}
	if *store != "" {
		return backupOffline(ctx, s, *store, *data, *out)
	}
	if cl.given("data") {
		return cl.fail(s, "--data names the store file of --store embedded; without --store the running server's store is backed up")
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

// backupOffline backs up the store that store and data name, opened
// here (a store holding an unfinished import is refused): the embedded
// store as a copy of its file, checked as a store (checkStoreFile); Neo4j,
// which has no file, as a dump of everything with the recordings, read
// back whole (header, records, trailer, checksum) before it is put in
// place at out. procgraph restore takes either.
func backupOffline(ctx context.Context, s stdio, store, data, out string) int {
	cfg, err := storeConfig(ctx, store, data)
	if err != nil {
		return fail(s.err, "backup", err)
	}
	if _, err := os.Stat(cfg.Data); cfg.Store == "embedded" && err != nil {
		return fail(s.err, "backup", err) // (opening would create an empty store there)
	}
	st, err := openDumpStore(ctx, cfg, true, "procgraph backup does not copy it")
	if err != nil {
		return fail(s.err, "backup", err)
	}
	defer st.Close()
	if bs, ok := st.(procedures.BackupStore); ok {
		w, commit, err := outputFile(out, nil)
		if err != nil {
			return fail(s.err, "backup", err)
		}
		n, err := bs.Backup(ctx, w)
		if err = commit(err); err != nil {
			return fail(s.err, "backup", err)
		}
		if err := checkStoreFile(ctx, out); err != nil {
			_ = os.Remove(out)
			return fail(s.err, "backup", fmt.Errorf("the copy is not a valid store (removed): %v", err))
		}
		fmt.Fprintf(s.out, "backed up %d bytes of %s to %s (checked)\n", n, cfg.Data, out)
		return 0
	}
	var records int64
	w, commit, err := outputFileThen(out, nil, func(tmp string) error {
		var err error
		records, err = checkDumpFile(tmp)
		return err
	})
	if err != nil {
		return fail(s.err, "backup", err)
	}
	bar := newRecordsBar(s.err, "backing up", "backed up")
	err = dump.Write(ctx, st, w, dump.DumpOptions{Recordings: true, Progress: bar.progress})
	bar.finish(err == nil)
	if err = commit(err); err != nil {
		return fail(s.err, "backup", fmt.Errorf("nothing was saved: %v", err))
	}
	fmt.Fprintf(s.out, "backed up the %s store to %s: a dump of %d records with the recordings (checked)\n", cfg.Store, out, records)
	return 0
}

// checkDumpFile reads the dump at path whole (dump.Validate: header,
// records, trailer, checksum) and returns its records.
func checkDumpFile(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	_, t, err := dump.Validate(f)
	if err != nil {
		return 0, fmt.Errorf("the written dump does not read back whole: %s", fault.ErrorMessage(err))
	}
	return t.Records, nil
}

// cmdRestore puts a backup in place of a stopped server's store file, or
// loads a Neo4j backup into an empty database (restoreNeo4j).
func cmdRestore(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("restore", "restore BACKUP [--store embedded|neo4j] [--data FILE]",
		"Replace the embedded store file with a backup (procgraph backup); the server must be stopped. With --store neo4j, load a backup of a Neo4j store (procgraph backup --store neo4j) into an empty database, its session policies and grants in force; run it again to resume.", false)
	store := cl.fs.String("store", "", "embedded or neo4j (default neo4j when NEO4J_URI is set, else embedded)")
	data := cl.fs.String("data", "./procgraph.db", "the embedded store file to replace")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	cfg, err := storeConfig(ctx, *store, *data)
	if err != nil {
		return fail(s.err, "restore", err)
	}
	if cfg.Store == "neo4j" {
		return restoreNeo4j(ctx, s, cfg, pos[0])
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

// restoreNeo4j loads the backup at path (a dump: procgraph backup --store
// neo4j) into the Neo4j database cfg names, which must be empty: a
// restore into Neo4j replaces nothing, so nothing is lost to it. It is an
// import (dump.Import: the whole file checked before anything is
// written, resumable) that keeps the backup's session policies and grants
// in force, audited as a restore.
func restoreNeo4j(ctx context.Context, s stdio, cfg *serveConfig, path string) int {
	st, err := openDumpStore(ctx, cfg, false, "")
	if err != nil {
		return fail(s.err, "restore", err)
	}
	defer st.Close()
	bar := newRecordsBar(s.err, "restoring", "restored")
	opts := dump.ImportOptions{Restore: true, TrustAuthorizations: true, Audit: procedures.NewRecorder(st, procedures.RecorderOptions{}),
		Actor: operator(), Validated: bar.validated, Progress: bar.progress}
	start := time.Now()
	sum, err := dump.Import(ctx, st, func() (io.ReadCloser, error) { return os.Open(path) }, opts)
	bar.finish(err == nil)
	if err != nil {
		if fault.ErrorCode(err) == fault.CodeConflict && sum.Resumed == 0 {
			if m, merr := st.LoadState(ctx); merr == nil && m == nil {
				err = fmt.Errorf("%s; a restore into Neo4j replaces nothing: export what the database holds if it matters (procgraph export --store neo4j -o FILE), empty it, then restore", fault.ErrorMessage(err))
			}
		}
		return fail(s.err, "restore", err)
	}
	fmt.Fprintf(s.out, "restored the neo4j store from %s in %v: %d records (dump of a %s store, procgraph %s); its session policies and durable grants are in force\n",
		filepath.Base(path), time.Since(start).Round(time.Millisecond), sum.Trailer.Records, sum.Header.Source, sum.Header.ProcgraphVersion)
	if sum.Resumed > 0 {
		fmt.Fprintf(s.out, "resumed after line %d of an interrupted restore\n", sum.Resumed)
	}
	return 0
}

// recordRestore appends the audit record of a restore of n bytes
// (audit.StoreDecision, reason restored) to the store file at path,
// leaving no search index beside it.
func recordRestore(ctx context.Context, path string, n int64) error {
	defer os.RemoveAll(embedded.SearchIndexPath(path))
	st, err := embedded.Open(path, embedded.Options{LockTimeout: time.Second})
	if err != nil {
		return err
	}
	_, err = procedures.NewRecorder(st, procedures.RecorderOptions{}).
		Record(ctx, audit.StoreDecision(audit.ReasonRestored, operator(), audit.RestoreNote(n)))
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
