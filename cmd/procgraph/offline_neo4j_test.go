package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/graph/storetest"
)

// neo4jOwnEnv, set to 1, says the Neo4j database at NEO4J_URI is this
// test binary's alone: the tests that empty it and fill it run (ownedNeo4j).
// graph/neo4j's suite empties the same database between its tests, so
// .ci/run runs these after it, in the same background path, with this set;
// its other `go test` leaves it unset and they skip there.
const neo4jOwnEnv = "PROCGRAPH_TEST_NEO4J_OWN"

// neo4jOwn is neo4jOwnEnv as the tests started with it (TestMain).
var neo4jOwn bool

// ownedNeo4j is the NEO4J_* environment of a Neo4j database tb may empty
// and fill, emptied; tb is skipped without one (failed under CI=true when
// neo4jOwnEnv says there is one but NEO4J_URI is missing). The tests that
// call it share the database: none of them is parallel.
func ownedNeo4j(tb testing.TB) map[string]string {
	tb.Helper()
	if !neo4jOwn {
		tb.Skipf("needs a Neo4j database of its own: %s=1 with NEO4J_URI (.ci/run runs it after graph/neo4j's suite)", neo4jOwnEnv)
	}
	if neo4jEnv["NEO4J_URI"] == "" {
		tb.Fatalf("%s=1 but NEO4J_URI is not set", neo4jOwnEnv)
	}
	env := map[string]string{}
	for _, k := range []string{"NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE"} {
		env[k] = neo4jEnv[k]
	}
	emptyNeo4j(tb, env)
	return env
}

// emptyNeo4j deletes every node of the database env names (the schema
// stays), in transactions of 10,000.
func emptyNeo4j(tb testing.TB, env map[string]string) {
	tb.Helper()
	ctx := context.Background()
	d, err := neo4j.NewDriverWithContext(env["NEO4J_URI"], neo4j.BasicAuth(env["NEO4J_USERNAME"], env["NEO4J_PASSWORD"], ""))
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close(ctx)
	sess := d.NewSession(ctx, neo4j.SessionConfig{DatabaseName: env["NEO4J_DATABASE"]})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, "MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS", nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		tb.Fatalf("emptying Neo4j: %v", err)
	}
}

// setNeo4jEnv sets env in the process for serve (parseServeConfig reads
// the NEO4J_* settings there): only in a test that is not parallel.
func setNeo4jEnv(t *testing.T, env map[string]string) {
	for k, v := range env {
		t.Setenv(k, v)
	}
}

var (
	storeDumpOnce sync.Once
	storeDump     string
)

// mustStoreDump is a dump (with recordings) of a filled embedded store,
// made once per test binary.
func mustStoreDump(t *testing.T) string {
	t.Helper()
	storeDumpOnce.Do(func() {
		dir, err := os.MkdirTemp("", "procgraph-neo4j-dump-")
		if err != nil {
			t.Fatal(err)
		}
		src := mustFilledStoreFile(t, dir, 40)
		p := filepath.Join(dir, "filled.pgdump")
		if code, _, errOut := runMain(t, "export", "--store", "embedded", "--data", src, "--with-recordings", "-o", p); code != 0 {
			t.Fatalf("export of the embedded store: exit %d: %s", code, errOut)
		}
		storeDump = p
	})
	if storeDump == "" {
		t.Fatal("the shared dump could not be made")
	}
	return storeDump
}

// TestOfflineCommandsOnNeo4jNeedNoTokens: export, import and audit prune
// with --store neo4j serve nothing, so they never ask for the tokens file
// serve needs; with nothing listening at NEO4J_URI they fail reaching
// Neo4j, and say so.
func TestOfflineCommandsOnNeo4jNeedNoTokens(t *testing.T) {
	t.Setenv("NEO4J_URI", "bolt://127.0.0.1:1")
	t.Setenv("PROCGRAPH_TOKENS_FILE", "")
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 3)
	dumpFile := filepath.Join(dir, "d.jsonl")
	if code, _, errOut := runMain(t, "export", "--store", "embedded", "--data", src, "-o", dumpFile); code != 0 {
		t.Fatalf("export of the embedded store: exit %d: %s", code, errOut)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"export", []string{"export", "--store", "neo4j", "-o", filepath.Join(dir, "out.jsonl")}},
		{"import", []string{"import", dumpFile, "--store", "neo4j"}},
		{"import --merge", []string{"import", dumpFile, "--store", "neo4j", "--merge"}},
		{"audit prune", []string{"audit", "prune", "--store", "neo4j", "--before", "2020-01-01", "-o", filepath.Join(dir, "archive.jsonl")}},
		{"backup", []string{"backup", "--store", "neo4j", "-o", filepath.Join(dir, "backup.pgdump")}},
		{"restore", []string{"restore", dumpFile, "--store", "neo4j"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0 with no Neo4j listening: %s%s", out, errOut)
			}
			if strings.Contains(errOut, "tokens") {
				t.Fatalf("an offline command asked for tokens: %s", errOut)
			}
			if !strings.Contains(errOut, "opening Neo4j at bolt://127.0.0.1:1") {
				t.Fatalf("the error does not say Neo4j could not be reached: %s", errOut)
			}
		})
	}
	for _, p := range []string{"out.jsonl", "archive.jsonl", "backup.pgdump"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("a failed command left %s", p)
		}
	}
}

// TestNeo4jOfflineRoundTrip (issue 34's "Done when"): an embedded store
// filled through the real server — procedures with causes, two versions,
// a grant, invokes with their decisions and recordings, a turn approved
// and run — is exported, imported into a real Neo4j with `procgraph
// import --store neo4j`, served from there (`serve --store neo4j`), and
// every read over the API equals the embedded server's; then `export
// --store neo4j` writes the first dump again: equal line for line once the
// header and trailer (when, from which store, checksum) and the import's
// own audit records are set aside (docs/dumps.md "Embedded to Neo4j and
// back").
func TestNeo4jOfflineRoundTrip(t *testing.T) {
	env := ownedNeo4j(t)
	dir := t.TempDir()
	up := mustUpstream(t)
	data := filepath.Join(dir, "source.db")
	src := mustServe(t, serverOpts{Upstream: up, Data: data, AllowMutating: true})
	fillThroughServer(t, src)
	want := apiReads(t, src)
	src.Stop(t)
	if len(want) < 15 || !strings.Contains(want["/v1/procedures/"+readOnlyName+"/recordings"], `"task_id"`) {
		t.Fatalf("the embedded server answered %d reads, the recordings %s", len(want), want["/v1/procedures/"+readOnlyName+"/recordings"])
	}

	d1 := filepath.Join(dir, "embedded.pgdump")
	if code, _, errOut := runMain(t, "export", "--store", "embedded", "--data", data, "--with-recordings", "-o", d1); code != 0 {
		t.Fatalf("export of the embedded store: exit %d: %s", code, errOut)
	}
	code, out, errOut := runMainWith(t, env, "import", d1, "--store", "neo4j", "--trust-authorizations")
	if code != 0 || !strings.Contains(out, "into the neo4j store") || !strings.Contains(out, "recording  3 applied of 3") {
		t.Fatalf("import --store neo4j: exit %d\n%s%s", code, out, errOut)
	}

	setNeo4jEnv(t, env)
	n4 := mustServe(t, serverOpts{Upstream: up, AllowMutating: true, Extra: []string{"--store", "neo4j"}})
	got := apiReads(t, n4)
	imported := n4.decisions(t, "kind=store")
	n4.Stop(t)
	if len(imported) != 2 {
		t.Fatalf("the Neo4j store holds %d records of kind store, want the import's and its trust's: %v", len(imported), imported)
	}
	for path, w := range want {
		if got[path] != w {
			t.Errorf("GET %s on Neo4j differs from the embedded server's: %s", path, firstDiff(got[path], w))
		}
	}

	d2 := filepath.Join(dir, "neo4j.pgdump")
	if code, _, errOut := runMainWith(t, env, "export", "--store", "neo4j", "--with-recordings", "-o", d2); code != 0 {
		t.Fatalf("export --store neo4j: exit %d: %s", code, errOut)
	}
	ids := []string{}
	for _, d := range imported {
		ids = append(ids, d["id"].(string))
	}
	mustSameDumpBody(t, mustReadFile(t, d1), mustReadFile(t, d2), ids...)
}

// fillThroughServer fills s (--auth off, an upstream, mutating auto-run
// allowed) through its API: three procedures under two causes, one with a
// second version, a durable grant, invokes (decisions and recordings), a
// turn approved and run.
func fillThroughServer(t *testing.T, s *server) {
	t.Helper()
	s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": "s1", "cause": map[string]any{"name": "retry storms", "description": "jobs retried too often"}}, nil)
	s.mustCapture(t, map[string]any{"code": "b = tools.get_retry_chain(task_id=task_id)\na = tools.get_task_jobs_summary(task_id=task_id)\nreturn [a, b]",
		"session_id": "s2", "cause": map[string]any{"name": "retry storms"}}, nil)
	s.mustCapture(t, map[string]any{"code": killCode, "session_id": "s3", "cause": map[string]any{"name": "stuck jobs"}}, nil)
	s.mustCapture(t, map[string]any{"code": "return tools.get_task_jobs_summary(task_id=task_id)", "session_id": "s4"}, nil)
	for _, task := range []int{1, 2} {
		mustStatus(t, s.invoke(t, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": task}, "phase": "automatic"}), 200)
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"enabled": true, "reason": "read-only"}}), 200)
	mustStatus(t, s.invoke(t, "proc__get_task_jobs_summary", map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}), 200)
	turn := mustStatus(t, s.post(t, "/v1/turns", killTurn("s5", 7)), 202)["turn"].(map[string]any)
	mustStatus(t, s.post(t, "/v1/approvals/"+turn["id"].(string)+"/resolve", map[string]any{"choice": "run_once", "reason": "checked"}), 200)
	mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 200)
}

// apiReads is every read of the API the round trip compares, by path:
// the catalogue, Find, each procedure with its versions, each version's
// code, its recordings, the causes, the drift list and the audit log
// (without the records of kind store an import adds).
func apiReads(t *testing.T, s *server) map[string]string {
	t.Helper()
	out := map[string]string{}
	read := func(path string) map[string]any {
		r := s.get(t, path)
		mustStatus(t, r, 200)
		out[path] = string(r.Body)
		return r.JSON(t)
	}
	read("/v1/tools")
	read("/v1/drift")
	causes := read("/v1/causes")
	for _, c := range causes["causes"].([]any) {
		read("/v1/causes/" + url.PathEscape(c.(map[string]any)["name"].(string)))
	}
	list := read("/v1/procedures?limit=100")
	for _, p := range list["procedures"].([]any) {
		name := p.(map[string]any)["name"].(string)
		read("/v1/procedures/" + name)
		read("/v1/procedures/" + name + "/recordings")
		versions := read("/v1/procedures/" + name + "/versions")
		for _, v := range versions["versions"].([]any) {
			read("/v1/procedures/" + name + "/versions/" + v.(map[string]any)["code_hash"].(string))
		}
	}
	var kept []any
	for _, d := range read("/v1/decisions?limit=500")["decisions"].([]any) {
		if d.(map[string]any)["kind"] != "store" {
			kept = append(kept, d)
		}
	}
	out["/v1/decisions?limit=500"] = string(mustJSON(t, kept))
	return out
}

// mustSameDumpBody requires the dumps a and b to hold the same records,
// line for line, but for their headers and trailers (when, from which
// store, the checksum over those) and the audit records with ids skip (an
// import's own): the normalisation docs/dumps.md names.
func mustSameDumpBody(t *testing.T, a, b []byte, skip ...string) {
	t.Helper()
	keep := func(body []string) []string {
		return slices.DeleteFunc(body, func(line string) bool {
			return slices.ContainsFunc(skip, func(id string) bool {
				return strings.HasPrefix(line, `{"type":"decision"`) && strings.Contains(line, `"id":"`+id+`"`)
			})
		})
	}
	la, lb := keep(storetest.DumpBody(a)), keep(storetest.DumpBody(b))
	if len(la) != len(lb) {
		t.Errorf("the dumps hold %d and %d records", len(la), len(lb))
	}
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			t.Errorf("record %d differs:\n%s\n%s", i+1, la[i], lb[i])
			return
		}
	}
}

// firstDiff shows where a and b first differ, with some context.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-120, 0)
	return fmt.Sprintf("at byte %d:\n…%s\nwant\n…%s", i, a[from:min(i+120, len(a))], b[from:min(i+120, len(b))])
}

// mustExportNeo4j exports the Neo4j store env names (with recordings) and
// returns the dump.
func mustExportNeo4j(t *testing.T, env map[string]string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "neo4j.pgdump")
	if code, _, errOut := runMainWith(t, env, "export", "--store", "neo4j", "--with-recordings", "-o", p); code != 0 {
		t.Fatalf("export --store neo4j: exit %d: %s", code, errOut)
	}
	return mustReadFile(t, p)
}

// storeRecordIDs are the ids of the audit records of kind store in dump.
func storeRecordIDs(t *testing.T, dump []byte) []string {
	t.Helper()
	var ids []string
	for _, line := range storetest.DumpBody(dump) {
		if strings.HasPrefix(line, `{"type":"decision"`) && strings.Contains(line, `"kind":"store"`) {
			var rec struct {
				Data struct{ ID string } `json:"data"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, rec.Data.ID)
		}
	}
	return ids
}

// TestNeo4jImportRefusalsLoseNothing: into a Neo4j that holds data, an
// import without --merge is refused and the database is as it was; a
// merge of the same dump counts nothing twice (the store's dump is the
// same, but for the merge's record); a wrong password and an unreachable
// server are each told as such, naming no password.
func TestNeo4jImportRefusalsLoseNothing(t *testing.T) {
	env := ownedNeo4j(t)
	d := mustStoreDump(t)
	if code, out, errOut := runMainWith(t, env, "import", d, "--store", "neo4j"); code != 0 {
		t.Fatalf("import --store neo4j: exit %d\n%s%s", code, out, errOut)
	}
	before := mustExportNeo4j(t, env)

	code, out, errOut := runMainWith(t, env, "import", d, "--store", "neo4j")
	if code != 1 || !strings.Contains(errOut, "not empty") || !strings.Contains(errOut, "--merge") {
		t.Fatalf("import into a Neo4j holding data: exit %d\n%s%s", code, out, errOut)
	}
	mustSameDumpBody(t, before, mustExportNeo4j(t, env))

	code, out, errOut = runMainWith(t, env, "import", d, "--store", "neo4j", "--merge")
	if code != 0 || !strings.Contains(out, "merged") {
		t.Fatalf("import --merge: exit %d\n%s%s", code, out, errOut)
	}
	after := mustExportNeo4j(t, env)
	mustSameDumpBody(t, before, after, storeRecordIDs(t, after)...)
	if n := len(storeRecordIDs(t, after)) - len(storeRecordIDs(t, before)); n != 1 {
		t.Errorf("the merge left %d audit records of kind store, want 1", n)
	}

	wrong := maps.Clone(env)
	wrong["NEO4J_PASSWORD"] = env["NEO4J_PASSWORD"] + "-wrong"
	code, _, errOut = runMainWith(t, wrong, "export", "--store", "neo4j", "-o", filepath.Join(t.TempDir(), "x.pgdump"))
	if code != 1 || !strings.Contains(errOut, "opening Neo4j at "+env["NEO4J_URI"]) || !strings.Contains(strings.ToLower(errOut), "auth") || strings.Contains(errOut, wrong["NEO4J_PASSWORD"]) {
		t.Errorf("export with a wrong password: exit %d: %s", code, errOut)
	}
	t.Logf("a wrong password: %s", errOut)
	gone := maps.Clone(env)
	gone["NEO4J_URI"] = "bolt://127.0.0.1:1"
	code, _, errOut = runMainWith(t, gone, "import", d, "--store", "neo4j")
	if code != 1 || !strings.Contains(errOut, "opening Neo4j at bolt://127.0.0.1:1") {
		t.Errorf("import into an unreachable Neo4j: exit %d: %s", code, errOut)
	}
	t.Logf("an unreachable Neo4j: %s", errOut)
}

// TestNeo4jBackupRestorePrune: `backup --store neo4j` writes a dump of
// everything with the recordings, checked whole; `restore --store neo4j`
// refuses a database that holds data (it replaces nothing), and a cut
// backup before writing anything; into the emptied database it brings
// the store back as it was, grants in force, audited as a restore. `audit
// prune --store neo4j` archives the whole store, then prunes. A Neo4j
// holding an unfinished import is backed up, exported and pruned by none.
func TestNeo4jBackupRestorePrune(t *testing.T) {
	env := ownedNeo4j(t)
	dir := t.TempDir()
	if code, out, errOut := runMainWith(t, env, "import", mustStoreDump(t), "--store", "neo4j", "--trust-authorizations"); code != 0 {
		t.Fatalf("import --store neo4j: exit %d\n%s%s", code, out, errOut)
	}
	before := mustExportNeo4j(t, env)
	backup := filepath.Join(dir, "neo4j.backup")
	code, out, errOut := runMainWith(t, env, "backup", "--store", "neo4j", "-o", backup)
	if code != 0 || !strings.Contains(out, "(checked)") {
		t.Fatalf("backup --store neo4j: exit %d\n%s%s", code, out, errOut)
	}
	b := mustReadFile(t, backup)
	mustSameDumpBody(t, before, b)

	code, _, errOut = runMainWith(t, env, "restore", backup, "--store", "neo4j")
	if code != 1 || !strings.Contains(errOut, "not empty") || !strings.Contains(errOut, "replaces nothing") {
		t.Fatalf("restore into a Neo4j holding data: exit %d: %s", code, errOut)
	}
	mustSameDumpBody(t, before, mustExportNeo4j(t, env))

	emptyNeo4j(t, env)
	empty := mustExportNeo4j(t, env)
	cut := filepath.Join(dir, "cut.backup")
	if err := os.WriteFile(cut, b[:len(b)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runMainWith(t, env, "restore", cut, "--store", "neo4j"); code != 1 || !strings.Contains(errOut, "truncated") {
		t.Fatalf("restore of a cut backup: exit %d: %s", code, errOut)
	}
	mustSameDumpBody(t, empty, mustExportNeo4j(t, env))
	code, out, errOut = runMainWith(t, env, "restore", backup, "--store", "neo4j")
	if code != 0 || !strings.Contains(out, "restored the neo4j store") {
		t.Fatalf("restore --store neo4j: exit %d\n%s%s", code, out, errOut)
	}
	restored := mustExportNeo4j(t, env)
	ids := storeRecordIDs(t, restored)
	mustSameDumpBody(t, before, restored, ids[len(ids)-2:]...)
	if !strings.Contains(string(restored), `"reason":"restored"`) || !strings.Contains(string(restored), `"reason":"authorizations_trusted"`) {
		t.Errorf("the restore is not audited as one, its grants kept in force")
	}

	archive := filepath.Join(dir, "archive.pgdump")
	code, out, errOut = runMainWith(t, env, "audit", "prune", "--store", "neo4j", "--before", "2999-01-01", "-o", archive)
	if code != 0 || !strings.Contains(out, "then pruned") {
		t.Fatalf("audit prune --store neo4j: exit %d\n%s%s", code, out, errOut)
	}
	mustSameDumpBody(t, restored, mustReadFile(t, archive))
	if strings.Contains(string(mustExportNeo4j(t, env)), `{"type":"decision"`) {
		t.Errorf("audit prune left audit records older than its date")
	}

	// An unfinished import: a batch of a merge committed, then stopped.
	mustUnfinishedNeo4jImport(t, env, mustStoreDump(t))
	for _, args := range [][]string{
		{"export", "--store", "neo4j", "-o", filepath.Join(dir, "half.pgdump")},
		{"backup", "--store", "neo4j", "-o", filepath.Join(dir, "half.backup")},
		{"audit", "prune", "--store", "neo4j", "--before", "2999-01-01", "-o", filepath.Join(dir, "half-archive.pgdump")},
	} {
		code, _, errOut := runMainWith(t, env, args...)
		if code != 1 || !strings.Contains(errOut, "unfinished") || !strings.Contains(errOut, "--store neo4j") {
			t.Errorf("%s of a Neo4j holding an unfinished import: exit %d: %s", args[0], code, errOut)
		}
	}
	for _, p := range []string{"half.pgdump", "half.backup", "half-archive.pgdump"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("a refused command left %s", p)
		}
	}
}

// mustUnfinishedNeo4jImport leaves the Neo4j store env names holding an
// unfinished merge of dumpPath: its first batch committed with its marker,
// as an import killed after it leaves it.
func mustUnfinishedNeo4jImport(t *testing.T, env map[string]string, dumpPath string) {
	t.Helper()
	ctx := withEnv(context.Background(), env)
	cfg, err := storeConfig(ctx, "neo4j", "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := openDumpStore(ctx, cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The first batch's progress cancels the import: the next batch fails.
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = dump.Import(ictx, st, func() (io.ReadCloser, error) { return os.Open(dumpPath) }, dump.ImportOptions{BatchSize: 5, Merge: true,
		Progress: func(int64, int64) { cancel() }})
	if err == nil {
		t.Fatal("the import completed: nothing is left unfinished")
	}
	if m, err := st.LoadState(ctx); err != nil || m == nil {
		t.Fatalf("no unfinished import is left (%v)", err)
	}
}

// TestNeo4jProgressBarsInATerminal: in a real terminal, `import --store
// neo4j` shows the embedded store's bar, which stays on screen when done
// with its totals (every record of the dump, the rate, the time) above
// the summary; `export --store neo4j -o` gets one too.
func TestNeo4jProgressBarsInATerminal(t *testing.T) {
	env := ownedNeo4j(t)
	vars := []string{}
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	mustRecordsBars(t, vars, "neo4j", "--store", "neo4j")
}

// TestProgressBarsInATerminal is TestNeo4jProgressBarsInATerminal on the
// embedded store: the same bars.
func TestProgressBarsInATerminal(t *testing.T) {
	t.Parallel()
	mustRecordsBars(t, nil, "embedded", "--store", "embedded", "--data", filepath.Join(t.TempDir(), "bars.db"))
}

// mustRecordsBars runs import of the shared dump, then export, into and
// from the store storeArgs name, each in a real terminal with vars, and
// requires each bar left on screen whole with its totals.
func mustRecordsBars(t *testing.T, vars []string, store string, storeArgs ...string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := mustStoreDump(t)
	f, err := os.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	_, trailer, err := dump.Validate(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	vars = append(vars, runMainEnv+"=1", "TERM=xterm")
	total := fmt.Sprint(trailer.Records)
	term := startTerminal(t, vars, append([]string{exe, "import", d, "--batch", "50"}, storeArgs...)...)
	screen := term.waitExit()
	t.Logf("after import:\n%s", screen)
	mustMatchLines(t, screen, `^importing 100% \|█+\| \(`+total+`/`+total+`, \d+ records/s\) \[\d`, `^imported .* into the `+store+` store in `)

	out := filepath.Join(t.TempDir(), "out.pgdump")
	term = startTerminal(t, vars, append([]string{exe, "export", "--with-recordings", "-o", out}, storeArgs...)...)
	screen = term.waitExit()
	t.Logf("after export:\n%s", screen)
	mustMatchLines(t, screen, `^exporting 100% \|█+\| \((\d+)/(\d+), \d+ records/s\) \[\d`, `^exported the `+store+` store to `)
}

var offlineBig = flag.Bool("offline.big", false, "BenchmarkNeo4jOfflineCommands: also 10k and 100k procedures")

// BenchmarkNeo4jOfflineCommands times `procgraph import DUMP --store
// neo4j` into the emptied database and `procgraph export --store neo4j -o`
// of it, the commands as an operator runs them (progress lines included),
// for an embedded store of 1k procedures filled by storetest.Fill (and
// 10k, 100k with -offline.big). It needs the database to itself
// (ownedNeo4j). docs/benchmarks.md "Dumps".
func BenchmarkNeo4jOfflineCommands(b *testing.B) {
	env := ownedNeo4j(b)
	sizes := []int{1_000}
	if *offlineBig {
		sizes = append(sizes, 10_000, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			start := time.Now()
			src := mustFilledStoreFile(b, dir, n)
			d := filepath.Join(dir, "embedded.pgdump")
			if code, _, errOut := runMain(b, "export", "--store", "embedded", "--data", src, "-o", d); code != 0 {
				b.Fatalf("export of the embedded store: exit %d: %s", code, errOut)
			}
			fi, err := os.Stat(d)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("fill and export of %d procedures: %v, dump %.1f MiB", n, time.Since(start).Round(time.Millisecond), float64(fi.Size())/(1<<20))
			out := filepath.Join(dir, "neo4j.pgdump")
			for b.Loop() {
				b.StopTimer()
				emptyNeo4j(b, env)
				b.StartTimer()
				t0 := time.Now()
				if code, stdout, errOut := runMainWith(b, env, "import", d, "--store", "neo4j"); code != 0 {
					b.Fatalf("import --store neo4j: exit %d: %s%s", code, stdout, errOut)
				}
				imp := time.Since(t0)
				t0 = time.Now()
				if code, _, errOut := runMainWith(b, env, "export", "--store", "neo4j", "-o", out); code != 0 {
					b.Fatalf("export --store neo4j: exit %d: %s", code, errOut)
				}
				exp := time.Since(t0)
				b.Logf("%d procedures: import %v, export %v", n, imp.Round(time.Millisecond), exp.Round(time.Millisecond))
				b.ReportMetric(imp.Seconds(), "import_s")
				b.ReportMetric(exp.Seconds(), "export_s")
			}
		})
	}
}
