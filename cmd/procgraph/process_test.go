package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// serverProcess is procgraph serve as a real process: this test binary
// re-executed as procgraph, so its memory can be measured on its own.
type serverProcess struct {
	*server
	cmd *exec.Cmd
}

// mustServeProcess starts `serve` with args (serverOpts.args form) as a
// subprocess and waits until it listens; it is killed at cleanup.
func mustServeProcess(tb testing.TB, args []string) *serverProcess {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sink, addrc := &logSink{}, make(chan string, 1)
	go consumeLog(stderr, sink, addrc)
	s := &serverProcess{server: &server{logs: sink}, cmd: cmd}
	select {
	case s.URL = <-addrc:
	case <-time.After(30 * time.Second):
		tb.Fatalf("the subprocess did not listen:\n%s", sink.String())
	}
	return s
}

// procStatus reads a "kB" field (VmRSS, VmHWM) of /proc/pid/status, in bytes.
func procStatus(tb testing.TB, pid int, field string) int64 {
	tb.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("%s: %q", field, v)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// rss is the process's resident memory now.
func (s *serverProcess) rss(tb testing.TB) int64 { return procStatus(tb, s.cmd.Process.Pid, "VmRSS") }

// workers returns the pids of the server's live sandbox workers.
func (s *serverProcess) workers(tb testing.TB) []int {
	tb.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		st := string(b)
		fields := strings.Fields(st[strings.LastIndexByte(st, ')')+1:])
		if len(fields) < 2 || fields[0] == "Z" || fields[1] != strconv.Itoa(s.cmd.Process.Pid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(filepath.Dir(f), "environ"))
		if err == nil && bytes.Contains(env, []byte(sandbox.WorkerEnv+"=1\x00")) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}
