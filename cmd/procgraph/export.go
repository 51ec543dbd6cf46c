package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/internal/privfile"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// storeFlags registers --store and --data on cl: which store an offline
// command opens (NEO4J_* from the environment, as serve reads them). A
// store holding an unfinished import is refused, as serve refuses it
// (refuseUnfinishedImport): what the command would read of it is not what
// the store will hold.
func storeFlags(cl *cmdline) func(ctx context.Context) (dump.Store, string, error) {
	return storeFlagsOpen(cl, true, nil)
}

// storeFlagsCreated is storeFlags for procgraph import, which resumes an
// unfinished import instead of refusing it; its second function returns the
// embedded store file that open created ("" when it existed before, or the
// store is Neo4j): the file a refused import removes.
func storeFlagsCreated(cl *cmdline) (func(ctx context.Context) (dump.Store, string, error), func() string) {
	var created string
	open := storeFlagsOpen(cl, false, &created)
	return open, func() string { return created }
}

// storeFlagsOpen registers --store and --data on cl and returns the
// function that opens that store, refusing one that holds an unfinished
// import when refuse; the embedded store file it created is set in
// *created when created is not nil.
func storeFlagsOpen(cl *cmdline, refuse bool, created *string) func(ctx context.Context) (dump.Store, string, error) {
	store := cl.fs.String("store", "", "embedded or neo4j (default neo4j when NEO4J_URI is set, else embedded)")
	data := cl.fs.String("data", "./procgraph.db", "embedded store file")
	return func(ctx context.Context) (dump.Store, string, error) {
		cfg, err := storeConfig(ctx, *store, *data)
		if err != nil {
			return nil, "", err
		}
		if _, err := os.Stat(cfg.Data); cfg.Store == "embedded" && errors.Is(err, fs.ErrNotExist) && created != nil {
			*created = cfg.Data
		}
		ds, err := openDumpStore(ctx, cfg, refuse, "procgraph "+cl.fs.Name()+" does not read it")
		return ds, cfg.Store, err
	}
}

// storeConfig is the store an offline command names with --store and
// --data, the NEO4J_* settings read from the environment (getenv) as
// serve reads them; no tokens: an offline command serves nothing.
func storeConfig(ctx context.Context, store, data string) (*serveConfig, error) {
	cfg := &serveConfig{Store: store, Data: data, Neo4jURI: getenv(ctx, "NEO4J_URI"), Neo4jUsername: getenv(ctx, "NEO4J_USERNAME"),
		Neo4jPassword: getenv(ctx, "NEO4J_PASSWORD"), Neo4jDatabase: getenv(ctx, "NEO4J_DATABASE")}
	if cfg.Store != "" && cfg.Store != "embedded" && cfg.Store != "neo4j" {
		return nil, fmt.Errorf("--store: %q is not embedded or neo4j", cfg.Store)
	}
	if err := cfg.resolveStore(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// openDumpStore opens the store cfg names, refusing one that holds an
// unfinished import when refuse (refuseUnfinishedImport, saying refused).
func openDumpStore(ctx context.Context, cfg *serveConfig, refuse bool, refused string) (dump.Store, error) {
	s, err := openStore(ctx, cfg, zerolog.Nop())
	if err != nil {
		return nil, err
	}
	ds, ok := s.(dump.Store)
	if !ok {
		_ = s.Close()
		return nil, fmt.Errorf("the %s store cannot export or import", cfg.Store)
	}
	if refuse {
		if err := refuseUnfinishedImport(ctx, ds, cfg, refused); err != nil {
			_ = ds.Close()
			return nil, err
		}
	}
	return ds, nil
}

// cmdExport writes a dump of a store.
func cmdExport(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("export", "export [--with-recordings] [--store embedded|neo4j] [--data FILE] [-o DUMP] | export --server [--with-recordings] [-o DUMP]",
		"Write everything the store holds as a line-delimited JSON dump (docs/dumps.md); stdout without -o. Recordings (tool output) are left out unless --with-recordings. A store a running serve holds is exported through that server: --server (GET /v1/export, admin; PROCGRAPH_URL, PROCGRAPH_TOKEN).", false)
	open := storeFlags(cl)
	out := cl.fs.String("o", "", "the dump file (written whole or not at all); default stdout")
	server := cl.fs.Bool("server", false, "export through the running server at PROCGRAPH_URL (GET /v1/export, admin scope) instead of opening the store")
	withRecordings := cl.fs.Bool("with-recordings", false, "also export the versions' recordings (tool calls with their answers: tool output; through --server the grant scope too)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	opts := dump.DumpOptions{Recordings: *withRecordings}
	if *server {
		return exportThroughServer(ctx, s, *out, opts)
	}
	st, source, err := open(ctx)
	var locked *storeLockedError
	if errors.As(err, &locked) {
		return fail(s.err, "export", fmt.Errorf("%v; while it serves, export through it: procgraph export --server -o DUMP (with PROCGRAPH_URL naming that server; the admin scope)", err))
	}
	if err != nil {
		return fail(s.err, "export", err)
	}
	defer st.Close()
	w, commit, err := outputFile(*out, s.out)
	if err != nil {
		return fail(s.err, "export", err)
	}
	start := time.Now()
	var bar *recordsBar
	if *out != "" || !isTerminal(s.out) {
		// (A dump written to the terminal itself gets no bar in its lines.)
		bar = newRecordsBar(s.err, "exporting", "exported")
		opts.Progress = bar.progress
	}
	err = dump.Write(ctx, st, w, opts)
	bar.finish(err == nil)
	if err = commit(err); err != nil {
		return fail(s.err, "export", err)
	}
	if *out != "" {
		fmt.Fprintf(s.err, "exported the %s store to %s in %v\n", source, *out, time.Since(start).Round(time.Millisecond))
	}
	return 0
}

// exportThroughServer saves GET /v1/export of the server at PROCGRAPH_URL
// (?with_recordings=true with opts.Recordings) to path (stdout when ""). What arrives is read back as a dump while it is
// copied (dump.Validate: header, records, trailer and checksum): an answer
// cut short or altered on the way is refused, and with a path nothing is
// left at it.
func exportThroughServer(ctx context.Context, s stdio, path string, opts dump.DumpOptions) int {
	c := newClient(ctx)
	route := "/v1/export"
	if opts.Recordings {
		route += "?with_recordings=true"
	}
	resp, err := c.stream(ctx, route)
	if err != nil {
		return fail(s.err, "export", err)
	}
	defer resp.Body.Close()
	w, commit, err := outputFile(path, s.out)
	if err != nil {
		return fail(s.err, "export", err)
	}
	start := time.Now()
	pr, pw := io.Pipe()
	checked := make(chan error, 1)
	go func() {
		_, _, err := dump.Validate(pr)
		_, _ = io.Copy(io.Discard, pr) // drain what follows a refusal
		checked <- err
	}()
	_, err = io.Copy(io.MultiWriter(w, pw), resp.Body)
	pw.CloseWithError(err)
	if verr := <-checked; err == nil && verr != nil {
		err = fmt.Errorf("the server's answer is not a whole dump (%w)", verr)
		if path != "" {
			err = fmt.Errorf("%w; nothing was saved", err)
		}
	}
	if err = commit(err); err != nil {
		return fail(s.err, "export", err)
	}
	if path != "" {
		fmt.Fprintf(s.err, "exported the store of the server at %s to %s in %v\n", c.base, path, time.Since(start).Round(time.Millisecond))
	}
	return 0
}

// outputFile is where a command writes: stdout, or path through a private
// temporary file beside it (privfile: created exclusively, 0600), renamed
// into place by commit(nil) once it is still the file written (removed on
// an error).
func outputFile(path string, stdout io.Writer) (io.Writer, func(error) error, error) {
	return outputFileThen(path, stdout, nil)
}

// outputFileThen is outputFile whose commit(nil), when path is set, runs
// finish on the written temporary file (synced and closed) before renaming
// it into place; finish's error removes it.
func outputFileThen(path string, stdout io.Writer, finish func(tmp string) error) (io.Writer, func(error) error, error) {
	if path == "" {
		return stdout, func(err error) error { return err }, nil
	}
	f, made, err := privfile.Create(filepath.Dir(path), "."+filepath.Base(path)+".*", 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, func(err error) error {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && finish != nil {
			err = finish(f.Name())
		}
		if err == nil {
			err = privfile.Rename(f.Name(), made, path)
		}
		if err != nil {
			_ = os.Remove(f.Name())
		}
		return err
	}, nil
}

// cmdImport loads a dump into an empty store, or merges it into one that
// holds data (--merge), or resumes an interrupted import of the same dump.
func cmdImport(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("import", "import DUMP [--merge] [--trust-authorizations] [--recordings-per-version N] [--store embedded|neo4j] [--data FILE] [--batch N]",
		"Load a dump into an empty store, or merge it into a store that holds data (--merge); run it again after a crash to resume (docs/dumps.md).", false)
	open, created := storeFlagsCreated(cl)
	batch := cl.fs.Int("batch", dump.DefaultImportBatch, "records per store transaction")
	merge := cl.fs.Bool("merge", false, "merge into a store that may hold data (docs/dumps.md \"Merging\"): usage keys make counts exact")
	trust := cl.fs.Bool("trust-authorizations", false, "keep the dump's session policies and durable grants in force (audited); without it they arrive inactive")
	timeout := cl.fs.Duration("approval-timeout", gate.DefaultApprovalTimeout, "the target's --approval-timeout: no imported approval's deadline is later than now + this")
	maxPending := cl.fs.Int("max-pending-approvals", gate.DefaultMaxPendingApprovals, "the target's --max-pending-approvals: imported approvals past it arrive expired")
	perRequester := cl.fs.Int("max-pending-per-requester", 0, "the target's --max-pending-per-requester (default 8, or --max-pending-approvals when lower): one requester's imported approvals past it arrive expired")
	keep := cl.fs.Int("recordings-per-version", recording.DefaultRecordingsPerVersion, fmt.Sprintf("the target's --recordings-per-version (1-%d): each version keeps its newest of its own and the dump's recordings", recording.MaxRecordingsPerVersion))
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	if *batch < 1 || *maxPending < 1 || *perRequester < 0 || *perRequester > *maxPending || *timeout < time.Second {
		return cl.fail(s, "--batch and --max-pending-approvals must be at least 1, --max-pending-per-requester at most --max-pending-approvals, --approval-timeout at least 1s")
	}
	if err := recording.CheckRecordingsPerVersion(*keep); err != nil {
		return cl.fail(s, "--"+err.Error())
	}
	st, target, err := open(ctx)
	if err != nil {
		return fail(s.err, "import", err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = st.Close()
		}
	}()
	opts := dump.ImportOptions{BatchSize: *batch, Merge: *merge, Audit: procedures.NewRecorder(st, procedures.RecorderOptions{}), Actor: operator(),
		TrustAuthorizations: *trust, ApprovalTimeout: *timeout, Pending: gate.PendingBounds{Total: *maxPending, PerRequester: *perRequester},
		RecordingsPerVersion: *keep}
	bar := newRecordsBar(s.err, "importing", "imported")
	opts.Validated, opts.Progress = bar.validated, bar.progress
	start := time.Now()
	sum, err := dump.Import(ctx, st, func() (io.ReadCloser, error) { return os.Open(pos[0]) }, opts)
	bar.finish(err == nil)
	if err != nil {
		if path := created(); path != "" {
			// The import created this file: a refused or failed import
			// leaves none behind (a pre-existing store is never removed).
			closed = true
			_ = st.Close()
			_ = os.Remove(path)
			_ = os.RemoveAll(embedded.SearchIndexPath(path))
		}
		return fail(s.err, "import", err)
	}
	verb := "imported"
	if sum.Merged {
		verb = "merged"
	}
	fmt.Fprintf(s.out, "%s %s into the %s store in %v (dump of a %s store, procgraph %s, format %d)\n",
		verb, pos[0], target, time.Since(start).Round(time.Millisecond), sum.Header.Source, sum.Header.ProcgraphVersion, sum.Header.Format)
	if sum.Resumed > 0 {
		fmt.Fprintf(s.out, "resumed after line %d of an interrupted import\n", sum.Resumed)
	}
	if *trust {
		fmt.Fprintln(s.out, "kept the dump's session policies and durable grants in force (--trust-authorizations; audited)")
	} else {
		fmt.Fprintln(s.out, "the dump's session policies and durable grants arrived inactive (pass --trust-authorizations to keep them)")
	}
	if sum.CatalogueKept {
		fmt.Fprintf(s.out, "kept the store's catalogue (revision %s); the dump's (revision %s) differs: upload it if it should replace it\n",
			sum.TargetRevision, sum.DumpRevision)
	}
	for _, t := range dump.CountTypes {
		fmt.Fprintf(s.out, "  %-10s %d applied of %d\n", t, sum.Applied[t], sum.Trailer.Counts[t])
	}
	if es, ok := st.(*embedded.Store); ok {
		// The import's batches leave their free pages in the file, which
		// every later commit would pay for: compact it (the import holds
		// the file; a failure leaves it imported, uncompacted).
		closed = true
		if err := st.Close(); err != nil {
			return fail(s.err, "import", err)
		}
		res, err := embedded.Compact(ctx, es.Path(), time.Second)
		if err != nil {
			fmt.Fprintf(s.err, "import: the store is imported but could not be compacted (run procgraph compact): %v\n", err)
			return 0
		}
		printCompacted(s, es.Path(), res)
	}
	return 0
}
