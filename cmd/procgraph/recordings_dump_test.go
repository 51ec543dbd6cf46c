package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExportWithRecordings: export leaves the recordings out (tool
// output); export --with-recordings carries them, through the server too
// (--server), and an import into a fresh store serves them from GET
// /v1/procedures/{name}/recordings as they were recorded. No command's
// output and no server log carries the tool output.
func TestExportWithRecordings(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "p.db")
	s := mustServe(t, serverOpts{Upstream: up, Data: data})
	name := mustCaptureName(t, s, readOnlyCode, "r1")
	for _, task := range []int{1, 2} {
		mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": task}, "phase": "automatic"}), 200)
	}
	want := string(s.get(t, "/v1/procedures/"+name+"/recordings").Body)
	if !strings.Contains(want, `"task_id":101`) {
		t.Fatalf("the source keeps no recording with the upstream's answer: %s", want)
	}
	through := filepath.Join(dir, "through.pgdump")
	code, out, errOut := runMainWith(t, map[string]string{"PROCGRAPH_URL": s.URL}, "export", "--server", "--with-recordings", "-o", through)
	if code != 0 {
		t.Fatalf("export --server --with-recordings: exit %d, %s", code, errOut)
	}
	noisy := out + errOut
	s.Stop(t)
	noisy += s.logs.String()

	plain, with := filepath.Join(dir, "plain.pgdump"), filepath.Join(dir, "with.pgdump")
	for _, c := range []struct {
		path string
		args []string
	}{{plain, nil}, {with, []string{"--with-recordings"}}} {
		code, out, errOut := runMain(t, append([]string{"export", "--data", data, "-o", c.path}, c.args...)...)
		if code != 0 {
			t.Fatalf("export %v: exit %d, %s", c.args, code, errOut)
		}
		noisy += out + errOut
	}
	if b := string(mustReadFile(t, plain)); strings.Contains(b, `"type":"recording"`) || strings.Contains(b, `"task_id":101`) {
		t.Fatalf("export without --with-recordings carries recordings:\n%s", b)
	}
	for _, p := range []string{with, through} {
		b := string(mustReadFile(t, p))
		if n := strings.Count(b, `{"type":"recording"`); n != 2 || !strings.Contains(b, `"recording":2`) {
			t.Fatalf("%s holds %d recordings, want 2 (and counted):\n%s", filepath.Base(p), n, b)
		}
	}

	for _, p := range []string{with, through} {
		target := filepath.Join(t.TempDir(), "q.db")
		code, out, errOut := runMain(t, "import", p, "--data", target)
		if code != 0 || !strings.Contains(out, "recording  2 applied of 2") {
			t.Fatalf("import of %s: exit %d\n%s%s", filepath.Base(p), code, out, errOut)
		}
		noisy += out + errOut
		s2 := mustServe(t, serverOpts{Upstream: up, Data: target})
		if got := string(s2.get(t, "/v1/procedures/"+name+"/recordings").Body); got != want {
			t.Errorf("the imported store (%s) serves\n%s\nwant\n%s", filepath.Base(p), got, want)
		}
		decisions := string(s2.get(t, "/v1/decisions?kind=store").Body)
		if !strings.Contains(decisions, "recording 2 of 2") || strings.Contains(decisions, "task_id") {
			t.Errorf("the import's audit record: %s; want its counts, never a value", decisions)
		}
		s2.Stop(t)
		noisy += s2.logs.String()
	}
	// The upstream answers {"tool", "args", "tasks": [{"task_id": 101}]}.
	if strings.Contains(noisy, "tasks") || strings.Contains(noisy, `"task_id":101`) {
		t.Errorf("a command's output or a server log carries tool output:\n%s", noisy)
	}
}
