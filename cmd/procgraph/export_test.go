package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// mustFilledStoreFile makes an embedded store file holding the suite's
// scenarios and n fixture procedures, closed.
func mustFilledStoreFile(tb testing.TB, dir string, n int) string {
	tb.Helper()
	path := filepath.Join(dir, "source.db")
	s, err := embedded.Open(path, embedded.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	storetest.Fill(tb, s, n)
	storetest.FillScenarios(tb, s)
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

func mustOpenEmbedded(tb testing.TB, path string) *embedded.Store {
	tb.Helper()
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// TestExportImportCommands: export -o, import into a new file, export
// again: the dumps' records are equal; a second import is refused; a
// truncated dump is refused naming its line, the target left empty.
func TestExportImportCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 50)
	d1, d2 := filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "two.jsonl")
	if code, _, errOut := runMain(t, "export", "--store", "embedded", "--data", src, "-o", d1); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	target := filepath.Join(dir, "target.db")
	code, out, errOut := runMain(t, "import", d1, "--data", target, "--batch", "7", "--trust-authorizations")
	// (An import into the embedded store compacts it at its end; the
	// export below reads the compacted file.)
	if code != 0 || !strings.Contains(out, "procedure  55 applied of 55") || !strings.Contains(out, "compacted "+target) {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	if code, _, errOut := runMain(t, "export", "--data", target, "-o", d2); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	// The imported store is the dump's records and the import's audit record.
	rec := mustStoreRecord(t, target, audit.ReasonImported)
	if !strings.Contains(rec.Note, "procedure 55 of 55") || !strings.Contains(rec.Note, "decision ") {
		t.Errorf("the import's record: %+v", rec)
	}
	trust := mustStoreRecord(t, target, audit.ReasonAuthorizationsTrusted)
	b1, b2 := mustReadFile(t, d1), mustReadFile(t, d2)
	// The approvals' deadlines passed long ago: they arrive expired
	// (TestHostileDumps); everything else is as dumped, trusted.
	approval := func(line string) bool { return strings.HasPrefix(line, `{"type":"approval"`) }
	body1 := slices.DeleteFunc(storetest.DumpBody(b1), approval)
	body2 := slices.DeleteFunc(storetest.DumpBody(b2), func(line string) bool {
		return approval(line) || strings.Contains(line, `"id":"`+rec.ID+`"`) || strings.Contains(line, `"id":"`+trust.ID+`"`)
	})
	if strings.Join(body1, "\n") != strings.Join(body2, "\n") {
		t.Errorf("the dump of the imported store, but for the import's records and the approvals, differs from the original")
	}
	if code, _, errOut := runMain(t, "import", d1, "--data", target); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Errorf("import into a non-empty store: exit %d: %s", code, errOut)
	}
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, b1[:len(b1)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	if code, _, errOut := runMain(t, "import", cut, "--data", other); code != 1 || !strings.Contains(errOut, "truncated") || !strings.Contains(errOut, "line ") {
		t.Errorf("import of a truncated dump: exit %d: %s", code, errOut)
	}
	if empty, err := mustOpenEmbedded(t, other).Empty(context.Background()); err != nil || !empty {
		t.Errorf("a refused import left the store non-empty (%v)", err)
	}
}

// mustStoreRecord requires the store file at path to hold exactly one audit
// record of kind store with reason, made by this operator and naming no
// procedure, code hash or code, and returns it.
func mustStoreRecord(t *testing.T, path, reason string) audit.Decision {
	t.Helper()
	s := mustOpenEmbedded(t, path)
	defer s.Close()
	ds := slices.DeleteFunc(storetest.MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindStore}),
		func(d audit.Decision) bool { return d.Reason != reason })
	if len(ds) != 1 {
		t.Fatalf("%s holds %d records of kind store with reason %s, want 1: %+v", path, len(ds), reason, ds)
	}
	d := ds[0]
	if d.Reason != reason || d.Outcome != audit.Allowed || d.Actor != operator() || d.Procedure != "" || d.CodeHash != "" ||
		strings.Contains(d.Note, "tools.") || strings.Contains(d.Note, "proc__") {
		t.Fatalf("the %s record: %+v (operator %s)", reason, d, operator())
	}
	return d
}

// withoutStoreRecord is text (a dump or the reads of the store at path)
// with the id, time and note of the store's one store record replaced by
// placeholders: two stores loaded from the same dump differ only there.
func withoutStoreRecord(t *testing.T, s procedures.Store, text string) string {
	t.Helper()
	ds := storetest.MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindStore})
	if len(ds) != 1 {
		t.Errorf("%d records of kind store, want 1", len(ds))
		return text
	}
	at, _ := json.Marshal(ds[0].At)
	note, _ := json.Marshal(ds[0].Note)
	return strings.NewReplacer(ds[0].ID, "pgd_STORE", string(at), `"AT"`, string(note), `"NOTE"`).Replace(text)
}

func mustReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestImportResumesAfterSIGKILL: a real `procgraph import` subprocess is
// killed (SIGKILL) mid-import; running the import again resumes after the
// last committed batch, and the store then equals one clean import of the
// dump, record for record and read for read.
func TestImportResumesAfterSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 1500)
	dump := filepath.Join(dir, "dump.jsonl")
	if code, _, errOut := runMain(t, "export", "--data", src, "-o", dump); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	crashed := filepath.Join(dir, "crashed.db")
	m := mustKillImport(t, crashed, "import", dump, "--data", crashed, "--batch", "5")
	if m.Merge {
		t.Errorf("the marker of an import says merge: %+v", m)
	}
	// Neither served nor exported, archived or compacted with half its records.
	mustServeRefuseMarked(t, crashed)
	mustOfflineRefuseMarked(t, crashed, fmt.Sprintf("dump sha256 %s, applied up to line %d", m.DumpID, m.Line))
	start := time.Now()
	code, out, errOut := runMain(t, "import", dump, "--data", crashed, "--batch", "500")
	if code != 0 || !strings.Contains(out, "resumed after line") {
		t.Fatalf("resume: exit %d: %s%s", code, out, errOut)
	}
	t.Logf("resumed after line %d in %v", m.Line, time.Since(start))
	clean := filepath.Join(dir, "clean.db")
	if code, out, errOut := runMain(t, "import", dump, "--data", clean); code != 0 {
		t.Fatalf("clean import: exit %d: %s%s", code, out, errOut)
	}
	requireSameFiles(t, crashed, clean)
}

// mustKillImport runs procgraph with args (an import into the store file
// path) as a real subprocess, SIGKILLs it at its third progress line and
// returns the marker it left.
func mustKillImport(t *testing.T, path string, args ...string) *dump.LoadMarker {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	// Killed at its third progress line (a fifth of the way or more).
	progressed := 0
	for progressed < 3 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "imported ") {
			progressed++
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if progressed < 3 {
		t.Fatalf("the import printed no progress before it ended")
	}
	s := mustOpenEmbedded(t, path)
	m, err := s.LoadState(context.Background())
	if err != nil || m == nil || m.Line <= 1 {
		t.Fatalf("after the kill the marker is %+v (%v); want an import in progress", m, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

// requireSameFiles fails when the stores at paths a and b differ in a
// record of their dumps or a read, or a fails its check or holds a marker.
func requireSameFiles(t *testing.T, a, b string) {
	t.Helper()
	sa, sb := mustOpenEmbedded(t, a), mustOpenEmbedded(t, b)
	if err := sa.Check(context.Background()); err != nil {
		t.Errorf("%s fails its check: %v", a, err)
	}
	// Each holds its own record of the import (another id, time and note).
	da := withoutStoreRecord(t, sa, strings.Join(storetest.DumpBody(storetest.MustDump(t, sa, "x")), "\n"))
	db := withoutStoreRecord(t, sb, strings.Join(storetest.DumpBody(storetest.MustDump(t, sb, "x")), "\n"))
	if da != db {
		t.Errorf("%s differs from %s", a, b)
	}
	if ra, rb := withoutStoreRecord(t, sa, storetest.Reads(t, sa)), withoutStoreRecord(t, sb, storetest.Reads(t, sb)); ra != rb {
		t.Errorf("reads differ between %s and %s", a, b)
	}
	if m, _ := sa.LoadState(context.Background()); m != nil {
		t.Errorf("marker left in %s: %+v", a, m)
	}
}

// TestMergeResumesAfterSIGKILL: a real `procgraph import --merge`, into a
// store whose history overlaps the dump's (1000 fixture procedures with the
// same usage keys, and the merge suite's target), is killed mid-merge;
// resuming without --merge is refused; with it, the store then equals one
// clean merge, record for record and read for read: nothing counted twice.
func TestMergeResumesAfterSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fill := func(name string, n int, history func(testing.TB, procedures.Store)) string {
		path := filepath.Join(dir, name)
		s, err := embedded.Open(path, embedded.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		storetest.Fill(t, s, n)
		history(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	src := fill("source.db", 1500, storetest.MergeSource)
	crashed := fill("crashed.db", 1000, storetest.MergeTarget)
	clean := filepath.Join(dir, "clean.db")
	if err := os.WriteFile(clean, mustReadFile(t, crashed), 0o600); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(dir, "dump.jsonl")
	if code, _, errOut := runMain(t, "export", "--data", src, "-o", dump); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runMain(t, "import", dump, "--data", clean); code != 1 || !strings.Contains(errOut, "--merge") {
		t.Errorf("import into a store with data, without --merge: exit %d: %s", code, errOut)
	}
	m := mustKillImport(t, crashed, "import", dump, "--merge", "--data", crashed, "--batch", "5")
	if !m.Merge {
		t.Errorf("the marker of a merge does not say so: %+v", m)
	}
	if code, _, errOut := runMain(t, "import", dump, "--data", crashed); code != 1 || !strings.Contains(errOut, "resume it with --merge") {
		t.Errorf("resuming a merge without --merge: exit %d: %s", code, errOut)
	}
	code, out, errOut := runMain(t, "import", dump, "--merge", "--data", crashed, "--batch", "500")
	if code != 0 || !strings.Contains(out, "resumed after line") || !strings.Contains(out, "merged ") {
		t.Fatalf("resume: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := runMain(t, "import", dump, "--merge", "--data", clean); code != 0 {
		t.Fatalf("clean merge: exit %d: %s%s", code, out, errOut)
	}
	// The most frequent procedures have 3 distinct keys (proc__get_logs
	// k8, u2, u3; proc__get_jobs__get_logs k1, k2, k5, k2 in both
	// stores); every tenth fixture procedure, captured twice with the same
	// keys in both stores, has 2, not 4.
	s := mustOpenEmbedded(t, clean)
	ps, _ := storetest.MustFind(t, s, procedures.Query{Limit: 3})
	if len(ps) != 3 || ps[1].Name != storetest.NameOf("get_jobs", "get_logs") || ps[0].Frequency != 3 || ps[1].Frequency != 3 || ps[2].Frequency != 2 {
		for _, p := range ps {
			t.Errorf("after the merge: %s has frequency %d", p.Name, p.Frequency)
		}
		t.Errorf("want frequencies 3, 3 (%s) and 2", storetest.NameOf("get_jobs", "get_logs"))
	}
	_ = s.Close()
	requireSameFiles(t, crashed, clean)
}

// TestAuditPruneCommand: audit prune exports first (the archive holds every
// record), then prunes only the older ones; without -o nothing happens.
func TestAuditPruneCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 5)
	archive := filepath.Join(dir, "archive.pgdump")
	if code, _, _ := runMain(t, "audit", "prune", "--before", "2025-03-04T03:06:38Z", "--data", src); code != 2 {
		t.Errorf("audit prune without -o: exit %d, want 2", code)
	}
	s := mustOpenEmbedded(t, src)
	before := len(storetest.MustDecisions(t, s, audit.DecisionFilter{Limit: 1000}))
	_ = s.Close()
	code, out, errOut := runMain(t, "audit", "prune", "--before", "2025-03-04T03:06:38Z", "-o", archive, "--data", src)
	if code != 0 || !strings.Contains(out, "pruned") {
		t.Fatalf("audit prune: exit %d: %s%s", code, out, errOut)
	}
	s = mustOpenEmbedded(t, src)
	after := storetest.MustDecisions(t, s, audit.DecisionFilter{Limit: 1000})
	if len(after) == 0 || len(after) >= before {
		t.Errorf("after the prune %d of %d records are left", len(after), before)
	}
	restored := filepath.Join(dir, "restored.db")
	if code, out, errOut := runMain(t, "import", archive, "--data", restored); code != 0 {
		t.Fatalf("import of the archive: exit %d: %s%s", code, out, errOut)
	}
	if got := len(storetest.MustDecisions(t, mustOpenEmbedded(t, restored), audit.DecisionFilter{Limit: 1000})); got != before+1 {
		t.Errorf("the archive's import holds %d records, want the store's %d and the import's", got, before)
	}
}
