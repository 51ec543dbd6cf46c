package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 50)
	d1, d2 := filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "two.jsonl")
	if code, _, errOut := runMain(t, "export", "--store", "embedded", "--data", src, "-o", d1); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	target := filepath.Join(dir, "target.db")
	code, out, errOut := runMain(t, "import", d1, "--data", target, "--batch", "7")
	if code != 0 || !strings.Contains(out, "procedure  55 applied of 55") {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	if code, _, errOut := runMain(t, "export", "--data", target, "-o", d2); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	b1, b2 := mustReadFile(t, d1), mustReadFile(t, d2)
	if strings.Join(storetest.DumpBody(b1), "\n") != strings.Join(storetest.DumpBody(b2), "\n") {
		t.Errorf("the dump of the imported store differs from the original")
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
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 1500)
	dump := filepath.Join(dir, "dump.jsonl")
	if code, _, errOut := runMain(t, "export", "--data", src, "-o", dump); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	crashed := filepath.Join(dir, "crashed.db")
	cmd := exec.Command(exe, "import", dump, "--data", crashed, "--batch", "5")
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
	s := mustOpenEmbedded(t, crashed)
	m, err := s.LoadState(context.Background())
	if err != nil || m == nil || m.Line <= 1 {
		t.Fatalf("after the kill the marker is %+v (%v); want an import in progress", m, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
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
	a, b := mustOpenEmbedded(t, crashed), mustOpenEmbedded(t, clean)
	if err := a.Check(context.Background()); err != nil {
		t.Errorf("the resumed store fails its check: %v", err)
	}
	da, db := storetest.DumpBody(storetest.MustDump(t, a, "x")), storetest.DumpBody(storetest.MustDump(t, b, "x"))
	if strings.Join(da, "\n") != strings.Join(db, "\n") {
		t.Errorf("the resumed import differs from a clean one")
	}
	if ra, rb := storetest.Reads(t, a), storetest.Reads(t, b); ra != rb {
		t.Errorf("reads differ between the resumed and the clean import")
	}
	if m, _ := a.LoadState(context.Background()); m != nil {
		t.Errorf("marker left after the resumed import: %+v", m)
	}
	var _ procedures.DumpStore = a
}

// TestAuditPruneCommand: audit prune exports first (the archive holds every
// record), then prunes only the older ones; without -o nothing happens.
func TestAuditPruneCommand(t *testing.T) {
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 5)
	archive := filepath.Join(dir, "archive.pgdump")
	if code, _, _ := runMain(t, "audit", "prune", "--before", "2025-03-04T03:06:38Z", "--data", src); code != 2 {
		t.Errorf("audit prune without -o: exit %d, want 2", code)
	}
	s := mustOpenEmbedded(t, src)
	before := len(storetest.MustDecisions(t, s, procedures.DecisionFilter{Limit: 1000}))
	_ = s.Close()
	code, out, errOut := runMain(t, "audit", "prune", "--before", "2025-03-04T03:06:38Z", "-o", archive, "--data", src)
	if code != 0 || !strings.Contains(out, "pruned") {
		t.Fatalf("audit prune: exit %d: %s%s", code, out, errOut)
	}
	s = mustOpenEmbedded(t, src)
	after := storetest.MustDecisions(t, s, procedures.DecisionFilter{Limit: 1000})
	if len(after) == 0 || len(after) >= before {
		t.Errorf("after the prune %d of %d records are left", len(after), before)
	}
	restored := filepath.Join(dir, "restored.db")
	if code, out, errOut := runMain(t, "import", archive, "--data", restored); code != 0 {
		t.Fatalf("import of the archive: exit %d: %s%s", code, out, errOut)
	}
	if got := len(storetest.MustDecisions(t, mustOpenEmbedded(t, restored), procedures.DecisionFilter{Limit: 1000})); got != before {
		t.Errorf("the archive holds %d records, the store had %d", got, before)
	}
}
