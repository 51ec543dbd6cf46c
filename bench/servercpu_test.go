package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/mcpserve"
	"github.com/procgraph/procgraph/procedures"
)

// cpuFill is the procedures BenchmarkServerCPU's store holds before the
// server starts; cpuBatch the requests of one iteration.
const (
	cpuFill  = 1000
	cpuBatch = 25
)

// serverPerf, when set, records the server process with `perf record -g`
// into that file while the requests run (perf report -i FILE).
var serverPerf = flag.String("bench.perf", "", "BenchmarkServerCPU, BenchmarkInvokeCost: record the server with perf into this file")

// cpuIdle is how long the server's CPU must stay (nearly) still for it to
// count as idle, and cpuIdleSlack the CPU it may take meanwhile (the Go
// runtime's own wake-ups).
const (
	cpuIdle      = 300 * time.Millisecond
	cpuIdleSlack = 300 * time.Microsecond
)

// BenchmarkServerCPU measures the CPU the real server process spends per
// request: the `procgraph serve` binary is built and started as a
// process of its own on an embedded store (fsync on, as in production)
// filled with 1k procedures of a read-only catalogue (captured through
// procedures.Service before the server starts, so the fill costs the
// benchmark nothing), with auth off. For capture of an existing
// procedure, capture of a new one and a grant, each iteration sends
// cpuBatch requests from this process one after the other; after the
// last the benchmark waits until the server is idle (its CPU still for
// cpuIdle). The _alone variants send one request per iteration, each
// measured from an idle server to an idle server RefreshSpacing later (a
// write that shares nothing it leaves behind with the next). The CPU is
// the server's: the sum over its threads of /proc/<pid>/task/*/schedstat
// (nanoseconds), with /proc/<pid>/stat utime+stime (clock ticks) beside
// it. So the figure holds the work a request leaves behind (the MCP
// tools' refresh, the search indexer), which in-process figures miss. It
// reports the server's CPU µs per request (cpu-us/req) and logs a table
// with the load average:
//
//	go test ./bench -run '^$' -bench ServerCPU -benchtime 10x -v
func BenchmarkServerCPU(b *testing.B) {
	srv := startServerProcess(b)
	type op struct {
		name string
		run  func(b *testing.B, i int)
		// alone: one request per iteration, then the server goes idle
		// (after mcpserve.RefreshSpacing), so nothing it leaves behind is
		// shared with the next: a write that comes alone.
		alone bool
	}
	existing := cpuCode(0, 0)
	var newSeq int
	grantName := srv.capture(b, existing, "")
	captureExisting := func(b *testing.B, _ int) {
		if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": existing, "session_id": key()}); st != 200 {
			b.Fatalf("%d %s", st, body)
		}
	}
	grant := func(b *testing.B, _ int) {
		if st, body := srv.do(b, "PUT", "/v1/procedures/"+url.PathEscape(grantName)+"/auto-run", map[string]any{"enabled": true}); st != 200 {
			b.Fatalf("%d %s", st, body)
		}
	}
	ops := []op{
		{name: "capture_existing", run: captureExisting},
		{name: "capture_new", run: func(b *testing.B, _ int) {
			// New pairs of catalogue tools: the fill took b_000 to b_004.
			newSeq++
			c := cpuCode(newSeq%200, 5+newSeq/200)
			if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": c}); st != 201 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "grant", run: grant},
		{name: "capture_existing_alone", run: captureExisting, alone: true},
		{name: "grant_alone", run: grant, alone: true},
	}
	if *serverPerf != "" {
		stop := srv.perf(b, *serverPerf)
		defer stop()
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-23s %9s %12s %12s %9s\n", "request", "requests", "cpu µs/req", "ticks µs/req", "wall ms")
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			var cpu, ticks int64
			var wall time.Duration
			reqs := 0
			// begin and end bound a measurement between two idle points
			// of the server, adding up its CPU and the requests' time.
			var before, ticksBefore int64
			var start time.Time
			begin := func() { before, ticksBefore, start = srv.waitIdle(b), srv.ticks(b), time.Now() }
			end := func() {
				wall += time.Since(start)
				if o.alone {
					time.Sleep(mcpserve.RefreshSpacing)
				}
				cpu += srv.waitIdle(b) - before
				ticks += srv.ticks(b) - ticksBefore
			}
			if !o.alone {
				begin()
			}
			for b.Loop() {
				if o.alone {
					begin()
					o.run(b, reqs)
					reqs++
					end()
					continue
				}
				for range cpuBatch {
					o.run(b, reqs)
					reqs++
				}
			}
			if !o.alone {
				end()
			}
			per := float64(cpu) / float64(reqs) / 1e3
			perTicks := float64(ticks) / float64(reqs) / 1e3
			b.ReportMetric(per, "cpu-us/req")
			fmt.Fprintf(&table, "%-23s %9d %12.0f %12.0f %9.2f\n", o.name, reqs, per, perTicks, float64(wall.Microseconds())/1e3/float64(reqs))
		})
	}
	b.Logf("server process CPU per request (embedded, %d procedures, fsync on), load average %.2f:\n%s", cpuFill, loadAverage(), table.String())
}

// cpuServer is a `procgraph serve` process and its HTTP client.
type cpuServer struct {
	*server
	pid int
	// runs receives each replay's times as the server logged them
	// ("replay run"); one that finds it full is dropped.
	runs chan runTimes
}

// runTimes are a replay's times as the server logs them ("replay run"):
// before the run (prepare and decide), the run, and the commit after it.
type runTimes struct {
	prepared, run, commit time.Duration
}

// startServerProcess builds cmd/procgraph, fills a store and starts
// `serve` on it; the process is stopped at cleanup.
func startServerProcess(b *testing.B) *cpuServer {
	b.Helper()
	dir := b.TempDir()
	bin := buildProcgraph(b, dir)
	cat := filepath.Join(dir, "catalogue.json")
	if err := os.WriteFile(cat, cpuCatalogue(), 0o600); err != nil {
		b.Fatal(err)
	}
	data := filepath.Join(dir, "p.db")
	fillCPUStore(b, data, cat)
	return launchServe(b, b.Cleanup, bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--auth", "off", "--tools", cat)
}

// launchServe starts bin with args (a serve command) and waits until it
// listens; cleanup is given what stops it.
func launchServe(b *testing.B, cleanup func(func()), bin string, args ...string) *cpuServer {
	b.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addrc := make(chan string, 1)
	var logs bytes.Buffer
	s := &cpuServer{pid: cmd.Process.Pid, server: &server{
		client: &http.Client{Transport: &http.Transport{MaxIdleConns: 4, MaxIdleConnsPerHost: 4}, Timeout: time.Minute},
	}, runs: make(chan runTimes, 1024)}
	go func() {
		br := bufio.NewReader(stderr)
		sent := false
		for {
			line, err := br.ReadString('\n')
			var ev struct {
				Message  string  `json:"message"`
				Addr     string  `json:"addr"`
				Duration float64 `json:"duration"` // ms
				Prepared float64 `json:"prepared"` // ms
				Commit   float64 `json:"commit"`   // ms
			}
			if !sent {
				logs.WriteString(line)
				if json.Unmarshal([]byte(line), &ev) == nil && ev.Message == "listening" && ev.Addr != "" {
					addrc <- ev.Addr
					sent = true
				}
			} else if strings.Contains(line, `"replay run"`) && json.Unmarshal([]byte(line), &ev) == nil {
				select {
				case s.runs <- runTimes{prepared: msDuration(ev.Prepared), run: msDuration(ev.Duration), commit: msDuration(ev.Commit)}:
				default:
				}
			}
			if err != nil {
				_, _ = io.Copy(io.Discard, stderr)
				return
			}
		}
	}()
	select {
	case s.url = <-addrc:
	case <-time.After(60 * time.Second):
		b.Fatalf("the server did not listen:\n%s", logs.String())
	}
	s.url = strings.TrimSuffix(s.url, "/")
	return s
}

// msDuration is ms milliseconds.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// perf starts `perf record -g` on the server into out and returns what
// stops it (SIGINT: perf writes its file and exits).
func (s *cpuServer) perf(b *testing.B, out string) func() {
	b.Helper()
	cmd := exec.Command("perf", "record", "-g", "-o", out, "-p", strconv.Itoa(s.pid))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("perf: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // perf attaches
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
}

// cpuCode is a block calling catalogue tools cpu_a_<a> and cpu_b_<b>.
func cpuCode(a, b int) string {
	return fmt.Sprintf("x = tools.cpu_a_%03d(task_id=task_id)\nreturn tools.cpu_b_%03d(x=x)", a, b)
}

// cpuCatalogue is a catalogue of 200 + 200 read-only tools, so that every
// procedure of the benchmark is exposed (an MCP proc__ tool).
func cpuCatalogue() []byte {
	var tools []map[string]any
	for _, v := range []string{"a", "b"} {
		for i := range 200 {
			tools = append(tools, map[string]any{
				"name": fmt.Sprintf("cpu_%s_%03d", v, i), "description": "benchmark tool", "read_only": true,
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}},
			})
		}
	}
	out, _ := json.Marshal(map[string]any{"tools": tools})
	return out
}

// fillCPUStore captures cpuFill procedures into a new store at data
// through procedures.Service, under the catalogue of the file cat.
func fillCPUStore(b *testing.B, data, cat string) {
	b.Helper()
	ctx := context.Background()
	st, err := embedded.Open(data, embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := procedures.NewService(st, procedures.Options{})
	raw, err := os.ReadFile(cat)
	if err != nil {
		b.Fatal(err)
	}
	var file struct {
		Tools []procedures.Tool `json:"tools"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.PutCatalogue(ctx, file.Tools, "bench"); err != nil {
		b.Fatal(err)
	}
	for i := range cpuFill {
		if _, err := svc.Capture(ctx, procedures.CaptureRequest{Code: cpuCode(i%200, i/200), SessionID: key()}); err != nil {
			b.Fatal(err)
		}
	}
}

// capture captures code over HTTP and returns the procedure's name.
func (s *cpuServer) capture(b *testing.B, code, session string) string {
	b.Helper()
	st, body := s.do(b, "POST", "/v1/procedures", map[string]any{"code": code, "session_id": session})
	if st != 200 && st != 201 {
		b.Fatalf("%d %s", st, body)
	}
	var out struct {
		Procedure struct {
			Name string `json:"name"`
		} `json:"procedure"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Procedure.Name == "" {
		b.Fatalf("capture answer %s: %v", body, err)
	}
	return out.Procedure.Name
}

// cpu is the server's CPU so far in nanoseconds: the sum of its threads'
// run time (/proc/<pid>/task/*/schedstat; a thread that exited takes its
// time with it, and Go's threads rarely exit).
func (s *cpuServer) cpu(b *testing.B) int64 {
	b.Helper()
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", s.pid))
	if err != nil || len(files) == 0 {
		b.Fatalf("no schedstat for %d: %v", s.pid, err)
	}
	var sum int64
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		fields := strings.Fields(string(raw))
		if len(fields) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			b.Fatalf("%s: %q", f, raw)
		}
		sum += ns
	}
	return sum
}

// ticks is the server's utime+stime of /proc/<pid>/stat in nanoseconds
// (clock ticks of 10 ms: a cross-check of cpu).
func (s *cpuServer) ticks(b *testing.B) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		b.Fatal(err)
	}
	st := string(raw)
	fields := strings.Fields(st[strings.LastIndexByte(st, ')')+1:])
	// fields[0] is the state (field 3): utime and stime are fields 14, 15.
	u, err1 := strconv.ParseInt(fields[11], 10, 64)
	k, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", s.pid, st)
	}
	return (u + k) * int64(10*time.Millisecond)
}

// waitIdle waits until the server's CPU grows by less than cpuIdleSlack
// over cpuIdle and returns the CPU at the start of that still window (so
// the window's own runtime noise is not counted).
func (s *cpuServer) waitIdle(b *testing.B) int64 {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	const step = 50 * time.Millisecond
	var window []int64
	for time.Now().Before(deadline) {
		window = append(window, s.cpu(b))
		if n := int(cpuIdle / step); len(window) > n {
			window = window[len(window)-n-1:]
			if window[n]-window[0] < int64(cpuIdleSlack) {
				return window[0]
			}
		}
		time.Sleep(step)
	}
	b.Fatal("the server did not go idle within a minute")
	return 0
}
