package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestExportAndBackupOverHTTP: against a real server holding captures,
// GET /v1/export (admin only) streams a dump that imports into a new store
// with every record; procgraph backup saves a consistent copy while the
// server serves (admin and grant: the copy holds the recordings), and procgraph restore puts it in place of a stopped
// store, which then holds the same procedures.
func TestExportAndBackupOverHTTP(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	root := mustCreateToken(t, tokens, "root", "read,capture,invoke,grant,admin")
	reader := mustCreateToken(t, tokens, "reader", "read")
	adminOnly := mustCreateToken(t, tokens, "admin-only", "admin")
	s := mustServe(t, serverOpts{TokensFile: tokens})
	s.token = root
	name := mustCaptureName(t, s, "jobs = tools.get_jobs()\nreturn jobs", "sess-1")
	mustCaptureName(t, s, "jobs = tools.get_jobs()\nreturn jobs", "sess-2")

	get := func(path, token string) *http.Response {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := get("/v1/export", reader); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /v1/export as a reader: %d, want 403", resp.StatusCode)
	}
	resp := get("/v1/export", root)
	dump, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("GET /v1/export: %d %s, %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	path := filepath.Join(dir, "dump.jsonl")
	if err := os.WriteFile(path, dump, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "imported.db")
	code, out, errOut := runMain(t, "import", path, "--data", target)
	if code != 0 || !strings.Contains(out, "procedure  1 applied of 1") || !strings.Contains(out, "usage") {
		t.Fatalf("import of the served dump: exit %d: %s%s", code, out, errOut)
	}
	imported := mustOpenEmbedded(t, target)
	if p := storetest.MustGet(t, imported, name); p.Frequency != 2 {
		t.Errorf("imported %s has frequency %d, want 2", name, p.Frequency)
	}
	if got := searchNames(t, imported, "jobs"); !slices.Equal(got, []string{name}) {
		t.Errorf("q=jobs on the imported store finds %v, want %s", got, name)
	}
	_ = imported.Close()

	t.Setenv("PROCGRAPH_URL", s.URL)
	t.Setenv("PROCGRAPH_TOKEN", reader)
	copyPath := filepath.Join(dir, "backup.db")
	if code, _, errOut := runMain(t, "backup", "-o", copyPath); code != 1 || !strings.Contains(errOut, "403") {
		t.Errorf("backup as a reader: exit %d: %s", code, errOut)
	}
	// The copy holds the recordings (tool output): admin alone is not
	// enough, as for an export with recordings.
	t.Setenv("PROCGRAPH_TOKEN", adminOnly)
	if code, _, errOut := runMain(t, "backup", "-o", copyPath); code != 1 || !strings.Contains(errOut, "403") || !strings.Contains(errOut, "grant") {
		t.Errorf("backup with an admin-only token: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(copyPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused backup left %s (%v)", copyPath, err)
	}
	t.Setenv("PROCGRAPH_TOKEN", root)
	if code, out, errOut := runMain(t, "backup", "-o", copyPath); code != 0 || !strings.Contains(out, "checked") {
		t.Fatalf("backup: exit %d: %s%s", code, out, errOut)
	}
	// The server holds its file: restore refuses to replace it.
	if code, _, errOut := runMain(t, "restore", copyPath, "--data", s.Data); code != 1 || !strings.Contains(errOut, "stop the server") {
		t.Errorf("restore over a served file: exit %d: %s", code, errOut)
	}
	restored := filepath.Join(dir, "restored.db")
	if code, out, errOut := runMain(t, "restore", copyPath, "--data", restored); code != 0 {
		t.Fatalf("restore: exit %d: %s%s", code, out, errOut)
	}
	r := mustOpenEmbedded(t, restored)
	if p := storetest.MustGet(t, r, name); p.Frequency != 2 {
		t.Errorf("restored %s has frequency %d, want 2", name, p.Frequency)
	}
	if err := r.Check(context.Background()); err != nil {
		t.Errorf("the restored store fails its check: %v", err)
	}
	if got := searchNames(t, r, "jobs"); !slices.Equal(got, []string{name}) {
		t.Errorf("q=jobs on the restored store finds %v, want %s", got, name)
	}
	if _, err := os.Stat(copyPath + ".search"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("backup left a search index beside the copy (%v)", err)
	}
	bad := filepath.Join(dir, "bad.db")
	_ = os.WriteFile(bad, []byte("not a store"), 0o600)
	if code, _, errOut := runMain(t, "restore", bad, "--data", restored); code != 1 || !strings.Contains(errOut, "not a valid store") {
		t.Errorf("restore of a bad file: exit %d: %s", code, errOut)
	}
}

// searchNames is the names q finds in s, sorted.
func searchNames(t *testing.T, s procedures.Store, q string) []string {
	t.Helper()
	out := storetest.MustSearchNames(t, s, q)
	slices.Sort(out)
	return out
}

// TestRestoreReplacesTheSearchIndex: restore puts a backup over a store
// file whose search index is at the same generation (as many search
// writes) but describes other procedures; after the restore, q finds the
// backup's procedures and none of the old file's.
func TestRestoreReplacesTheSearchIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fill := func(path, word string) []string {
		s, err := embedded.Open(path, embedded.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var names []string
		for i := range 3 {
			in := storetest.In([]string{fmt.Sprintf("%s_%d", word, i)}, fmt.Sprintf("h%d", i), "k", storetest.At(i))
			names = append(names, storetest.MustCapture(t, s, in).Procedure.Name)
		}
		if got := searchNames(t, s, word); !slices.Equal(got, names) {
			t.Fatalf("q=%s before the restore finds %v, want %v", word, got, names)
		}
		return names
	}
	data, other := filepath.Join(dir, "data.db"), filepath.Join(dir, "other.db")
	fill(data, "alpha")
	beta := fill(other, "beta")
	backup := filepath.Join(dir, "backup.db")
	src, err := embedded.Open(other, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(backup)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Backup(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	_ = src.Close()
	if code, out, errOut := runMain(t, "restore", backup, "--data", data); code != 0 {
		t.Fatalf("restore: exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(backup + ".search"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("restore left a search index beside the backup (%v)", err)
	}
	r := mustOpenEmbedded(t, data)
	if got := searchNames(t, r, "beta"); !slices.Equal(got, beta) {
		t.Errorf("after the restore q=beta finds %v, want %v", got, beta)
	}
	if got := searchNames(t, r, "alpha"); len(got) != 0 {
		t.Errorf("after the restore q=alpha finds %v, the old file's procedures", got)
	}
}

// TestBackupThroughFailingProxy: a proxy in front of procgraph that answers
// a non-JSON 502 makes backup fail with the status and the proxy's text,
// as every other client command does, and leaves no file.
func TestBackupThroughFailingProxy(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/backup" || r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("the proxy got %s %s (Authorization %q)", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html><body>502 Bad Gateway: upstream unreachable</body></html>\n")
	}))
	defer proxy.Close()
	t.Setenv("PROCGRAPH_URL", proxy.URL)
	t.Setenv("PROCGRAPH_TOKEN", "tok")
	out := filepath.Join(t.TempDir(), "backup.db")
	code, stdout, errOut := runMain(t, "backup", "-o", out)
	if code != 1 || !strings.Contains(errOut, "http_error (HTTP 502)") || !strings.Contains(errOut, "502 Bad Gateway: upstream unreachable") {
		t.Fatalf("backup through a failing proxy: exit %d\nstdout: %s\nstderr: %s", code, stdout, errOut)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed backup left %s (%v)", out, err)
	}
}

// TestCompactCommand: procgraph compact rewrites a stopped server's store
// file, which then serves the same procedures (its search index too), and
// refuses a file a running server holds, leaving it as it was.
func TestCompactCommand(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data.db")
	s, err := embedded.Open(data, embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 3 {
		in := storetest.In([]string{fmt.Sprintf("gamma_%d", i)}, fmt.Sprintf("h%d", i), "k", storetest.At(i))
		names = append(names, storetest.MustCapture(t, s, in).Procedure.Name)
	}
	code, out, errOut := runMain(t, "compact", "--data", data)
	if code == 0 || !strings.Contains(errOut, "locked by another process") || !strings.Contains(errOut, "stop the server first") {
		t.Fatalf("compact of a store in use: exit %d: %s%s", code, out, errOut)
	}
	if got := searchNames(t, s, "gamma"); !slices.Equal(got, names) {
		t.Fatalf("after the refused compact q=gamma finds %v, want %v", got, names)
	}
	_ = s.Close()
	code, out, errOut = runMain(t, "compact", "--data", data)
	if code != 0 || !strings.Contains(out, "compacted "+data) {
		t.Fatalf("compact: exit %d: %s%s", code, out, errOut)
	}
	if got := searchNames(t, mustOpenEmbedded(t, data), "gamma"); !slices.Equal(got, names) {
		t.Errorf("after compacting q=gamma finds %v, want %v", got, names)
	}
	if code, _, errOut := runMain(t, "compact", "--data", filepath.Join(t.TempDir(), "none.db")); code == 0 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("compact of a missing file: exit %d: %s", code, errOut)
	}
}

// TestBackupStoreEmbeddedOffline: `backup --store embedded` copies a
// stopped server's file, checked as a store; restore takes it back, and
// the store's dump is the same. Without --store, --data is refused; a
// missing store file is not created.
func TestBackupStoreEmbeddedOffline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 5)
	copyFile := filepath.Join(dir, "copy.db")
	code, out, errOut := runMain(t, "backup", "--store", "embedded", "--data", src, "-o", copyFile)
	if code != 0 || !strings.Contains(out, "(checked)") {
		t.Fatalf("backup --store embedded: exit %d\n%s%s", code, out, errOut)
	}
	target := filepath.Join(dir, "target.db")
	if code, _, errOut := runMain(t, "restore", copyFile, "--store", "embedded", "--data", target); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	d1, d2 := filepath.Join(dir, "1.pgdump"), filepath.Join(dir, "2.pgdump")
	for _, c := range [][2]string{{src, d1}, {target, d2}} {
		if code, _, errOut := runMain(t, "export", "--store", "embedded", "--data", c[0], "--with-recordings", "-o", c[1]); code != 0 {
			t.Fatalf("export: exit %d: %s", code, errOut)
		}
	}
	rec := mustStoreRecord(t, target, audit.ReasonRestored)
	mustSameDumpBody(t, mustReadFile(t, d1), mustReadFile(t, d2), rec.ID)
	if code, _, errOut := runMain(t, "backup", "--data", src, "-o", filepath.Join(dir, "x.db")); code != 2 || !strings.Contains(errOut, "--store embedded") {
		t.Fatalf("backup --data without --store: exit %d: %s", code, errOut)
	}
	missing := filepath.Join(dir, "missing.db")
	if code, _, errOut := runMain(t, "backup", "--store", "embedded", "--data", missing, "-o", filepath.Join(dir, "y.db")); code != 1 || !strings.Contains(errOut, "no such file") {
		t.Fatalf("backup of a missing store file: exit %d: %s", code, errOut)
	}
	for _, p := range []string{missing, filepath.Join(dir, "y.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("backup of a missing store file made %s", p)
		}
	}
}
