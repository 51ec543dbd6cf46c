package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/sandbox"
)

// The delay proxy over stdio: for the break-even, BenchmarkInvokeCost
// puts the test binary itself between the SDK's direct client and the
// filesystem server. TestMain runs it when stdioDelayEnv is set: it
// forwards newline-delimited JSON-RPC both ways and holds each message to
// the client stdioDelayEnv microseconds (an upstream that far away).
// Upstream times are logged by the server's own node process
// (invoke_timing.cjs, into the file nodeLogEnv names), so no process sits
// between procgraph and the server.
const (
	stdioDelayEnv = "PROCGRAPH_BENCH_STDIO_DELAY_US"
	nodeLogEnv    = "PROCGRAPH_BENCH_NODE_LOG"
)

// runStdioProxy is the delay proxy's main: argv is the server's command.
func runStdioProxy(delayUS string, argv []string) int {
	us, _ := strconv.Atoi(delayUS)
	delay := time.Duration(us) * time.Microsecond
	cmd := exec.Command(argv[0], argv[1:]...) // its stderr (banners) dropped
	cmd.Stdin = os.Stdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "stdio proxy:", err)
		return 1
	}
	type timed struct {
		at   time.Time
		line []byte
	}
	queue := make(chan timed, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for t := range queue {
			holdUntil(t.at)
			if _, err := os.Stdout.Write(t.line); err != nil {
				return
			}
		}
	}()
	r := bufio.NewReaderSize(out, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			queue <- timed{at: time.Now().Add(delay), line: line}
		}
		if err != nil {
			break
		}
	}
	close(queue)
	<-done
	_ = cmd.Wait()
	return 0
}

// holdUntil returns at t: it sleeps until a millisecond before, then
// polls (a timer of the Go runtime can wake a millisecond late, as long
// as the distances measured).
func holdUntil(t time.Time) {
	if d := time.Until(t) - time.Millisecond; d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}

// callLog reads what a server's node process logged (invoke_timing.cjs)
// since the last read.
type callLog struct {
	path string
	off  int64
}

// take returns the calls logged since the last take and their total time.
func (l *callLog) take(tb testing.TB) (calls int, total time.Duration) {
	tb.Helper()
	f, err := os.Open(l.path)
	if os.IsNotExist(err) {
		return 0, 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(l.off, io.SeekStart); err != nil {
		tb.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return 0, 0
	}
	l.off += int64(end + 1)
	for _, line := range strings.Split(string(data[:end]), "\n") {
		ns, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			tb.Fatalf("%s: %q", l.path, line)
		}
		calls++
		total += time.Duration(ns)
	}
	return calls, total
}

// startDelayProxy listens on loopback and forwards each connection to
// target, every chunk of the answer held delay before it is written back:
// a server delay further away, for a request and its answer. It returns
// the proxy's address.
func startDelayProxy(tb testing.TB, target string, delay time.Duration) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	shared.cleanup = append(shared.cleanup, func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
			go func() {
				type chunk struct {
					at   time.Time
					data []byte
				}
				q := make(chan chunk, 1024)
				go func() {
					for ch := range q {
						holdUntil(ch.at)
						if _, err := c.Write(ch.data); err != nil {
							break
						}
					}
					_ = c.Close()
				}()
				buf := make([]byte, 1<<16)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						q <- chunk{at: time.Now().Add(delay), data: slices.Clone(buf[:n])}
					}
					if err != nil {
						break
					}
				}
				close(q)
			}()
		}
	}()
	return ln.Addr().String()
}

// invokeServer is a `procgraph serve` process in front of the filesystem
// server (behind a stdio proxy logging to log).
type invokeServer struct {
	*cpuServer
	log  *callLog
	proc string // the proc__ procedure of three reads
}

// invokeWorld is what BenchmarkInvokeCost builds once per process.
type invokeWorld struct {
	disk, shm *invokeServer
	// disp calls the filesystem server from this process the way
	// procgraph does (mcpdispatch over stdio), its node logging to dispLog.
	disp    *mcpdispatch.Dispatcher
	dispLog *callLog
	// goDirect call the filesystem server from this process through a
	// delay proxy, by R ("0": none); mcpURL is /mcp behind one, by R.
	goDirect map[string]*mcpdispatch.Dispatcher
	goLogs   map[string]*callLog
	mcpURL   map[string]string
	py       *pyClient
	pyLogs   map[string]*callLog // the direct client's servers' logs, by R
	note     string              // the file every read reads
	dir      string
	// bare is the bare HTTP server's URL (startBareHTTP): the floor of a
	// request from the same clients.
	bare string
}

var (
	invokeOnce sync.Once
	invokeW    *invokeWorld
)

// invokeDelays are the break-even's distances R (ms; "0" none).
var invokeDelays = []string{"0", "0.25", "0.5", "1", "2", "4"}

// oneRead and threeReads are the blocks of the run_code turn and of the
// proc__ procedure (two tools at least, to be exposed); the SDK's direct
// client makes the same three calls (threeDirect).
const (
	oneRead    = "return tools.fs__read_text_file(path=path)"
	threeReads = "a = tools.fs__read_text_file(path=path)\nb = tools.fs__get_file_info(path=path)\nc = tools.fs__read_text_file(path=path)\nreturn [a, b, c]"
)

// threeDirect are threeReads's calls as the filesystem server names them.
var threeDirect = []string{"read_text_file", "get_file_info", "read_text_file"}

// invokeDeps returns node, the filesystem server's entry point and the
// SDK's Python, skipping the benchmark without them (install them as
// cmd/procgraph's real-upstream and interop tests say).
func invokeDeps(b *testing.B) (node, fsJS, timingJS, python string) {
	b.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not on PATH")
	}
	fsJS, _ = filepath.Abs("../cmd/procgraph/testdata/upstreams/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	if _, err := os.Stat(fsJS); err != nil {
		b.Skip("@modelcontextprotocol/server-filesystem is not installed: (cd cmd/procgraph/testdata/upstreams && npm ci)")
	}
	timingJS, _ = filepath.Abs("invoke_timing.cjs")
	python = os.Getenv("MCP_INTEROP_PYTHON")
	if python == "" {
		python, _ = filepath.Abs("../cmd/procgraph/testdata/interop/.venv/bin/python")
	}
	if _, err := os.Stat(python); err != nil {
		b.Skip("the official Python SDK is not installed: python3 -m venv cmd/procgraph/testdata/interop/.venv && cmd/procgraph/testdata/interop/.venv/bin/pip install -r cmd/procgraph/testdata/interop/requirements.txt")
	}
	return node, fsJS, timingJS, python
}

// heapFloorAB, when set, runs BenchmarkInvokeCost's second server on
// disk as the first, with that --heap-floor: its tmpfs/ rows then compare
// the floor with the first server's default, side by side in one run.
var heapFloorAB = flag.String("bench.heap-floor-ab", "", "BenchmarkInvokeCost: the second server on disk too, with this --heap-floor (its rows keep the tmpfs/ names)")

// buildInvokeWorld builds the binary, imports the filesystem server's
// tools, starts one server on disk (fsync on) and one on /dev/shm (a
// tmpfs: fsync costs nothing there), captures the procedure on each and
// starts the SDK's client.
func buildInvokeWorld(b *testing.B) *invokeWorld {
	node, fsJS, timingJS, python := invokeDeps(b)
	dir, err := os.MkdirTemp("", "pgb-invoke-")
	if err != nil {
		b.Fatal(err)
	}
	shared.cleanup = append(shared.cleanup, func() { _ = os.RemoveAll(dir) })
	shm, err := os.MkdirTemp("/dev/shm", "pgb-invoke-")
	if err != nil {
		b.Fatal(err)
	}
	shared.cleanup = append(shared.cleanup, func() { _ = os.RemoveAll(shm) })
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		b.Fatal(err)
	}
	w := &invokeWorld{note: filepath.Join(files, "note.txt"), dir: dir, pyLogs: map[string]*callLog{},
		goDirect: map[string]*mcpdispatch.Dispatcher{}, goLogs: map[string]*callLog{}, mcpURL: map[string]string{}}
	if err := os.WriteFile(w.note, []byte("hello from the disk\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := buildProcgraph(b, dir)
	fsArgs := []string{"-r", timingJS, fsJS, files}
	upstreams := func(log string) string {
		path := filepath.Join(dir, "upstreams-"+filepath.Base(log)+".json")
		f, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
			"command": node, "args": fsArgs, "env": map[string]string{nodeLogEnv: log},
			"trust_annotations": true}}})
		if err := os.WriteFile(path, f, 0o600); err != nil {
			b.Fatal(err)
		}
		return path
	}
	imp := exec.Command(bin, "tools", "import", "--upstreams", upstreams(filepath.Join(dir, "import.log")))
	var stderr bytes.Buffer
	imp.Stderr = &stderr
	cat, err := imp.Output()
	if err != nil {
		b.Fatalf("tools import: %v\n%s", err, stderr.String())
	}
	catFile := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(catFile, cat, 0o600); err != nil {
		b.Fatal(err)
	}
	start := func(dataDir, name string) *invokeServer {
		log := filepath.Join(dir, name+".log")
		s := &invokeServer{log: &callLog{path: log}}
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dataDir, name+".db"),
			"--auth", "off", "--tools", catFile, "--upstreams", upstreams(log)}
		if name == "shm" && *heapFloorAB != "" {
			args = append(args, "--heap-floor", *heapFloorAB)
		}
		s.cpuServer = launchServe(b, func(f func()) { shared.cleanup = append(shared.cleanup, f) }, bin, args...)
		s.proc = s.capture(b, threeReads, "")
		s.waitTool(b, s.proc)
		return s
	}
	w.disk = start(dir, "disk")
	if *heapFloorAB != "" {
		shm = dir // the second server on disk too: only its heap floor differs
	}
	w.shm = start(shm, "shm")
	w.bare = startBareHTTP(b)

	cfg := map[string]any{
		"direct": map[string]any{}, "mcp": map[string]any{},
		"read":     map[string]any{"path": w.note},
		"three":    threeDirect,
		"proc":     map[string]any{"name": w.disk.proc, "arguments": map[string]any{"path": w.note}},
		"run_code": map[string]any{"code": oneRead, "arguments": map[string]any{"path": w.note}},
		"bare":     w.bare,
	}
	for _, r := range invokeDelays {
		ms, _ := strconv.ParseFloat(r, 64)
		delay := time.Duration(ms * float64(time.Millisecond))
		log := filepath.Join(dir, "direct-"+r+".log")
		w.pyLogs[r] = &callLog{path: log}
		direct := map[string]any{"command": node, "args": fsArgs, "env": map[string]string{nodeLogEnv: log}}
		if delay > 0 {
			direct = map[string]any{"command": self, "args": append([]string{node}, fsArgs...),
				"env": map[string]string{nodeLogEnv: log, stdioDelayEnv: strconv.Itoa(int(delay / time.Microsecond))}}
		}
		cfg["direct"].(map[string]any)[r] = direct
		target := w.disk.url + "/mcp"
		if delay > 0 {
			u, _ := url.Parse(w.disk.url)
			target = "http://" + startDelayProxy(b, u.Host, delay) + "/mcp"
		}
		cfg["mcp"].(map[string]any)[r] = target
		w.mcpURL[r] = target
		argv := append([]string{node}, fsArgs...)
		w.goLogs[r] = &callLog{path: filepath.Join(dir, "go-direct-"+r+".log")}
		env := append(os.Environ(), nodeLogEnv+"="+w.goLogs[r].path)
		if delay > 0 {
			argv = append([]string{self}, argv...)
			env = append(env, stdioDelayEnv+"="+strconv.Itoa(int(delay/time.Microsecond)))
		}
		d, err := mcpdispatch.NewCommand(context.Background(), argv, mcpdispatch.Options{Env: env})
		if err != nil {
			b.Fatal(err)
		}
		shared.cleanup = append(shared.cleanup, func() { _ = d.Close() })
		w.goDirect[r] = d
	}
	w.py = startPyClient(b, python, cfg)
	w.dispLog = &callLog{path: filepath.Join(dir, "dispatch.log")}
	w.disp, err = mcpdispatch.NewCommand(context.Background(), append([]string{node}, fsArgs...),
		mcpdispatch.Options{Env: append(os.Environ(), nodeLogEnv+"="+w.dispLog.path)})
	if err != nil {
		b.Fatal(err)
	}
	shared.cleanup = append(shared.cleanup, func() { _ = w.disp.Close() })
	return w
}

// buildProcgraph builds cmd/procgraph into dir.
func buildProcgraph(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "procgraph")
	build := exec.Command("go", "build", "-o", bin, "github.com/procgraph/procgraph/cmd/procgraph")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitTool waits until /mcp lists the tool name (the MCP tools are
// refreshed after a capture).
func (s *invokeServer) waitTool(b *testing.B, name string) {
	b.Helper()
	for range 200 {
		if _, body := s.mcp(b, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`); bytes.Contains(body, []byte(`"`+name+`"`)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, proc := s.do(b, "GET", "/v1/procedures/"+url.PathEscape(name), nil)
	b.Fatalf("/mcp does not list %s: %s", name, proc)
}

// modernMeta is the _meta of a 2026-07-28 request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// mcp posts one 2026-07-28 JSON-RPC request to /mcp, with its Mcp-Method
// (and a tool call's Mcp-Name) header.
func (s *invokeServer) mcp(tb testing.TB, body string) (int, []byte) {
	tb.Helper()
	return s.mcpAt(tb, s.url+"/mcp", body)
}

// mcpAt is mcp posting to url (a delay proxy's, in front of the server).
func (s *invokeServer) mcpAt(tb testing.TB, url, body string) (int, []byte) {
	tb.Helper()
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		tb.Fatal(err)
	}
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Mcp-Method", m.Method)
	if m.Params.Name != "" {
		r.Header.Set("Mcp-Name", m.Params.Name)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	resp, err := s.client.Do(r)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// callTool is a 2026-07-28 tools/call body.
func callTool(name string, args any) string {
	a, _ := json.Marshal(args)
	n, _ := json.Marshal(name)
	return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":` + string(n) + `,"arguments":` + string(a) + `,` + modernMeta + `}}`
}

// pyClient is bench/invoke_client.py: the official Python SDK's client.
type pyClient struct {
	in  io.Writer
	out *bufio.Reader
}

func startPyClient(b *testing.B, python string, cfg map[string]any) *pyClient {
	b.Helper()
	raw, _ := json.Marshal(cfg)
	cmd := exec.Command(python, "invoke_client.py", string(raw))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	shared.cleanup = append(shared.cleanup, func() { _ = in.Close(); _ = cmd.Wait() })
	p := &pyClient{in: in, out: bufio.NewReader(out)}
	line, err := p.out.ReadBytes('\n')
	if err != nil || !bytes.Contains(line, []byte(`"ready"`)) {
		b.Fatalf("the Python client did not start: %v %s", err, line)
	}
	if !bytes.Contains(line, []byte(`2026-07-28`)) {
		b.Logf("the Python client negotiated: %s", line)
	}
	return p
}

// do runs op at distance r once and returns the wall time the SDK measured.
func (p *pyClient) do(tb testing.TB, op, r string) time.Duration {
	tb.Helper()
	if _, err := fmt.Fprintf(p.in, "%s %s\n", op, r); err != nil {
		tb.Fatal(err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		tb.Fatal(err)
	}
	var res struct {
		NS    int64  `json:"ns"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(line, &res); err != nil || res.Error != "" {
		tb.Fatalf("%s %s: %s", op, r, line)
	}
	return time.Duration(res.NS)
}

// invokeOp is one operation of BenchmarkInvokeCost: it runs once and
// returns its wall time, and the upstream calls it made with their time.
type invokeOp struct {
	name  string
	calls int // upstream calls it must make
	// srv, for an invoke, is the server whose logged run it takes.
	srv *invokeServer
	run func(tb testing.TB) (wall time.Duration, calls int, upstream time.Duration)
}

// samples are one operation's measurements: run, prepared and commit
// are the times the server logged for an invoke (runTimes), so run −
// upstream is the sandbox's and the dispatch's share, and wall −
// prepared − run − commit the transport's and the answer's (the HTTP
// chain, the request's and the answer's JSON, the client).
type samples struct {
	wall, upstream, own, run, prepared, commit []time.Duration
	// cpu is the CPU the server the operation is sent to spent from
	// just before it to just after (its threads' schedstat; not the
	// worker's nor the upstream's): under load a steadier figure than
	// wall. Work the server leaves behind counts to the next operation.
	cpu []time.Duration
}

// serverOf is the procgraph server operation name is sent to (nil: none).
func (w *invokeWorld) serverOf(name string) *invokeServer {
	switch {
	case strings.HasPrefix(name, "fsync/http/"), strings.HasPrefix(name, "fsync/mcp/"),
		strings.HasPrefix(name, "sdk/mcp/"), strings.HasPrefix(name, "sdk/legacy/"),
		strings.HasPrefix(name, "R=") && strings.Contains(name, "/mcp/"):
		return w.disk
	case strings.HasPrefix(name, "tmpfs/http/"), strings.HasPrefix(name, "tmpfs/mcp/"):
		return w.shm
	}
	return nil
}

// takeRun returns the times the server logged for the last invoke (zero
// when none arrives within a second).
func (s *invokeServer) takeRun() runTimes {
	select {
	case t := <-s.runs:
		return t
	case <-time.After(time.Second):
		return runTimes{}
	}
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// BenchmarkInvokeCost measures an invoke's own cost (issue 38 items 3
// and 4): the real `procgraph serve` binary on an embedded store, fsync on
// (and a second on /dev/shm, where fsync costs nothing: the difference is
// the commits'), in front of the real @modelcontextprotocol/server-filesystem
// over stdio, whose node process logs each call's time (invoke_timing.cjs:
// from the request read to the answer written). Each round runs, in an
// order that rotates:
//
//   - over HTTP from Go: an invoke of a proc__ procedure of three reads,
//     and a run_code turn of one read (POST /v1/turns); over /mcp from Go
//     (2026-07-28, one JSON body): the proc__ call, run_code and a ping;
//     on both servers;
//   - through the official Python SDK: one and three reads straight from
//     the filesystem server (over stdio, through the same proxy), the
//     proc__ call and run_code over /mcp, and a ping;
//   - one read from this process through mcpdispatch (as procgraph
//     calls an upstream over stdio);
//   - the floors: a warm sandbox worker round trip (a block of no call,
//     and of one call, in the pool of this process), a byte through cat
//     and back (the floor of a round trip between processes), the same
//     request from the same clients (Go's and the SDK's httpx2) to a bare
//     HTTP server in a process of its own (startBareHTTP), and a bbolt
//     commit alone, of one page and of as many pages as an invoke's
//     (invokeCommitPages), fsync'd on the same disk and on /dev/shm;
//   - the break-even: three direct reads against one proc__ call of
//     three, each through a proxy that holds every answer R ms (the test
//     binary over stdio, runStdioProxy; a TCP proxy in front of /mcp).
//
// An operation's own cost is its wall time minus its upstream calls' time
// (as the server saw them: its wake-up on each request counts as the
// caller's, for the direct client as for procgraph). It logs a table of
// medians with the load, an invoke's stages as its server logged them
// (samples) and their share of its own cost, the floors and each
// operation's own cost above the sum of its floors:
//
//	go test ./bench -run '^$' -bench InvokeCost -benchtime 100x -v
//
// It skips without node, the filesystem server or the SDK (see invokeDeps).
// -bench.perf FILE records the fsync server with perf meanwhile.
func BenchmarkInvokeCost(b *testing.B) {
	invokeOnce.Do(func() { invokeW = buildInvokeWorld(b) })
	if invokeW == nil {
		b.Skip("no world (see the first run's skip)")
	}
	w := invokeW
	ctx := context.Background()
	args := map[string]any{"path": w.note}
	httpOp := func(s *invokeServer, path string, body map[string]any, want int) func(tb testing.TB) (time.Duration, int, time.Duration) {
		return func(tb testing.TB) (time.Duration, int, time.Duration) {
			start := time.Now()
			st, out := s.do(tb, "POST", path, body)
			wall := time.Since(start)
			if st != want || !bytes.Contains(out, []byte(`"succeeded"`)) {
				tb.Fatalf("%s: %d %s", path, st, out)
			}
			n, up := s.log.take(tb)
			return wall, n, up
		}
	}
	mcpOp := func(s *invokeServer, body string) func(tb testing.TB) (time.Duration, int, time.Duration) {
		return func(tb testing.TB) (time.Duration, int, time.Duration) {
			start := time.Now()
			st, out := s.mcp(tb, body)
			wall := time.Since(start)
			var res struct {
				Error  json.RawMessage `json:"error"`
				Result *struct {
					IsError bool `json:"isError"`
				} `json:"result"`
			}
			if st != 200 || json.Unmarshal(out, &res) != nil || res.Error != nil || res.Result == nil || res.Result.IsError {
				tb.Fatalf("%s: %d %s", body, st, out)
			}
			n, up := s.log.take(tb)
			return wall, n, up
		}
	}
	pyOp := func(op, r string, log *callLog) func(tb testing.TB) (time.Duration, int, time.Duration) {
		return func(tb testing.TB) (time.Duration, int, time.Duration) {
			wall := w.py.do(tb, op, r)
			n, up := log.take(tb)
			return wall, n, up
		}
	}
	var ops []invokeOp
	for _, s := range []struct {
		name string
		s    *invokeServer
	}{{"fsync", w.disk}, {"tmpfs", w.shm}} {
		ops = append(ops,
			invokeOp{s.name + "/http/invoke-3", 3, s.s, httpOp(s.s, "/v1/procedures/"+url.PathEscape(s.s.proc)+"/invoke",
				map[string]any{"arguments": args, "phase": "automatic", "session_id": "bench"}, 200)},
			invokeOp{s.name + "/http/turn-1", 1, nil, httpOp(s.s, "/v1/turns",
				map[string]any{"code": oneRead, "arguments": args, "phase": "automatic", "session_id": "bench"}, 200)},
			invokeOp{s.name + "/mcp/proc-3", 3, s.s, mcpOp(s.s, callTool(s.s.proc, args))},
			invokeOp{s.name + "/mcp/run_code-1", 1, nil, mcpOp(s.s, callTool("run_code", map[string]any{"code": oneRead, "arguments": args, "session_id": "bench"}))},
			invokeOp{s.name + "/mcp/discover", 0, nil, mcpOp(s.s, `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{`+modernMeta+`}}`)},
		)
	}
	ops = append(ops,
		invokeOp{"sdk/direct-read-1", 1, nil, pyOp("direct_read", "0", w.pyLogs["0"])},
		invokeOp{"sdk/direct-read-3", 3, nil, pyOp("direct_three", "0", w.pyLogs["0"])},
		invokeOp{"sdk/mcp/proc-3", 3, w.disk, pyOp("proc", "0", w.disk.log)},
		invokeOp{"sdk/mcp/run_code-1", 1, nil, pyOp("run_code", "0", w.disk.log)},
		invokeOp{"sdk/mcp/discover", 0, nil, pyOp("discover", "0", w.disk.log)},
		invokeOp{"sdk/legacy/ping", 0, nil, pyOp("legacy_ping", "0", w.disk.log)},
		// The SDK's floor: the same HTTP client (httpx2) posting the
		// discover request to the bare server, no MCP client around it.
		invokeOp{"sdk/floor/http-bare", 0, nil, pyOp("bare", "0", w.disk.log)},
	)
	goThree := func(r string) func(tb testing.TB) (time.Duration, int, time.Duration) {
		return func(tb testing.TB) (time.Duration, int, time.Duration) {
			start := time.Now()
			for _, tool := range threeDirect {
				if _, err := w.goDirect[r].Dispatch(ctx, tool, args); err != nil {
					tb.Fatal(err)
				}
			}
			wall := time.Since(start)
			n, up := w.goLogs[r].take(tb)
			return wall, n, up
		}
	}
	goProc := func(r string) func(tb testing.TB) (time.Duration, int, time.Duration) {
		body := callTool(w.disk.proc, args)
		return func(tb testing.TB) (time.Duration, int, time.Duration) {
			start := time.Now()
			st, out := w.disk.mcpAt(tb, w.mcpURL[r], body)
			wall := time.Since(start)
			if st != 200 || !bytes.Contains(out, []byte(`"procgraph/status":"succeeded"`)) {
				tb.Fatalf("%d %s", st, out)
			}
			n, up := w.disk.log.take(tb)
			return wall, n, up
		}
	}
	for _, r := range invokeDelays {
		ops = append(ops,
			invokeOp{"R=" + r + "/go/direct-read-3", 3, nil, goThree(r)},
			invokeOp{"R=" + r + "/go/mcp/proc-3", 3, w.disk, goProc(r)},
		)
	}
	for _, r := range invokeDelays[1:] {
		ops = append(ops,
			invokeOp{"R=" + r + "/sdk/direct-read-3", 3, nil, pyOp("direct_three", r, w.pyLogs[r])},
			invokeOp{"R=" + r + "/sdk/mcp/proc-3", 3, w.disk, pyOp("proc", r, w.disk.log)},
		)
	}
	for _, c := range []struct {
		name, src string
		calls     int
	}{{"worker/round-trip", "return task_id", 0}, {"worker/one-call", "return tools.noop(task_id=task_id)", 1}} {
		req := sandbox.Request{Filename: "proc__bench.star", Source: c.src, Args: map[string]any{"task_id": int64(7)}, Allowed: []string{"noop"}}
		ops = append(ops, invokeOp{c.name, 0, nil, func(tb testing.TB) (time.Duration, int, time.Duration) {
			start := time.Now()
			res := pool.Run(ctx, req, sandbox.ToolCallerFunc(func(context.Context, string, map[string]any) (any, error) {
				return map[string]any{"ok": true}, nil
			}))
			wall := time.Since(start)
			if res.Err != nil || len(res.Calls) != c.calls {
				tb.Fatalf("%s: %+v", c.name, res.Err)
			}
			return wall, 0, 0
		}})
	}
	// The floor of a request from this client: the same request to a
	// server that answers it at once (a process of its own, as procgraph).
	bareBody := `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + modernMeta + `}}`
	ops = append(ops, invokeOp{"floor/http-bare", 0, nil, func(tb testing.TB) (time.Duration, int, time.Duration) {
		start := time.Now()
		st, out := w.disk.mcpAt(tb, w.bare, bareBody)
		wall := time.Since(start)
		if st != 200 || !bytes.Equal(out, bareAnswer) {
			tb.Fatalf("%d %s", st, out)
		}
		return wall, 0, 0
	}})
	ops = append(ops, invokeOp{"fsync/http/healthz", 0, nil, func(tb testing.TB) (time.Duration, int, time.Duration) {
		start := time.Now()
		if st, body := w.disk.do(tb, "GET", "/healthz", nil); st != 200 {
			tb.Fatalf("%d %s", st, body)
		}
		return time.Since(start), 0, 0
	}})
	ops = append(ops, invokeOp{"dispatch/read-1", 1, nil, func(tb testing.TB) (time.Duration, int, time.Duration) {
		start := time.Now()
		if _, err := w.disp.Dispatch(ctx, "read_text_file", map[string]any{"path": w.note}); err != nil {
			tb.Fatal(err)
		}
		wall := time.Since(start)
		n, up := w.dispLog.take(tb)
		return wall, n, up
	}})
	// The floor of a round trip between two processes: a byte through
	// cat and back (two wake-ups, as a worker's run or an upstream call
	// takes at least).
	cat := exec.Command("cat")
	catIn, _ := cat.StdinPipe()
	catOut, _ := cat.StdoutPipe()
	if err := cat.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = catIn.Close(); _ = cat.Wait() })
	ops = append(ops, invokeOp{"floor/pipe-round-trip", 0, nil, func(tb testing.TB) (time.Duration, int, time.Duration) {
		var one [1]byte
		start := time.Now()
		if _, err := catIn.Write([]byte{'x'}); err != nil {
			tb.Fatal(err)
		}
		if _, err := io.ReadFull(catOut, one[:]); err != nil {
			tb.Fatal(err)
		}
		return time.Since(start), 0, 0
	}})
	for _, d := range []struct{ name, dir string }{{"fsync", w.dir}, {"tmpfs", "/dev/shm"}} {
		db, err := bolt.Open(filepath.Join(d.dir, "floor-"+namespace()+".db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		path := db.Path()
		b.Cleanup(func() { _ = db.Close(); _ = os.Remove(path) })
		var i int
		ops = append(ops, invokeOp{d.name + "/bbolt-commit", 0, nil, func(tb testing.TB) (time.Duration, int, time.Duration) {
			i++
			start := time.Now()
			err := db.Update(func(tx *bolt.Tx) error {
				bk, err := tx.CreateBucketIfNotExists([]byte("floor"))
				if err != nil {
					return err
				}
				return bk.Put([]byte(strconv.Itoa(i%64)), bytes.Repeat([]byte("x"), 512))
			})
			if err != nil {
				tb.Fatal(err)
			}
			return time.Since(start), 0, 0
		}})
		ops = append(ops, invokeOp{d.name + "/bbolt-commit-" + strconv.Itoa(invokeCommitPages) + "p", 0, nil, func(tb testing.TB) (time.Duration, int, time.Duration) {
			i++
			start := time.Now()
			if err := db.Update(func(tx *bolt.Tx) error { return commitPages(tx, i) }); err != nil {
				tb.Fatal(err)
			}
			return time.Since(start), 0, 0
		}})
	}

	// Warm up: every operation twice, and the logs emptied.
	for range 2 {
		for _, o := range ops {
			o.run(b)
			if o.srv != nil {
				o.srv.takeRun()
			}
		}
	}
	got := make([]samples, len(ops))
	if *serverPerf != "" {
		stop := w.disk.perf(b, *serverPerf)
		defer stop()
	}
	loadBefore := loadAverage()
	b.ResetTimer()
	round := 0
	for b.Loop() {
		for k := range ops {
			i := (k + round) % len(ops)
			o := ops[i]
			srv := w.serverOf(o.name)
			var cpu0 int64
			if srv != nil {
				cpu0 = srv.cpu(b)
			}
			wall, n, up := o.run(b)
			if srv != nil {
				got[i].cpu = append(got[i].cpu, time.Duration(srv.cpu(b)-cpu0))
			}
			if n != o.calls {
				b.Fatalf("%s: %d upstream calls logged, want %d", o.name, n, o.calls)
			}
			got[i].wall = append(got[i].wall, wall)
			got[i].upstream = append(got[i].upstream, up)
			got[i].own = append(got[i].own, wall-up)
			if o.srv != nil {
				t := o.srv.takeRun()
				got[i].run = append(got[i].run, t.run)
				got[i].prepared = append(got[i].prepared, t.prepared)
				got[i].commit = append(got[i].commit, t.commit)
			}
		}
		round++
	}
	b.StopTimer()
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", msOf(d)) }
	var table strings.Builder
	// An invoke's stages, as its server logged them: prepared (prepare
	// and decide), run − upstream (the sandbox and the dispatch: the
	// worker's frames and wake-ups, each call's stdio round trip), commit
	// (the one commit, fsync'd on disk), and the rest: wall − prepared −
	// run − commit (the client, the loopback, the HTTP chain, the
	// request's and the answer's JSON).
	fmt.Fprintf(&table, "%-30s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "p50 ms", "wall", "upstream", "own", "run", "prepared", "run−up", "commit", "rest", "srv cpu")
	p := map[string]time.Duration{}
	stages := map[string][4]time.Duration{} // prepared, run − upstream, commit, rest
	for i, o := range ops {
		cols := []string{"", "", "", "", ""}
		if len(got[i].run) > 0 {
			var sandboxed, rest []time.Duration
			for k := range got[i].run {
				sandboxed = append(sandboxed, got[i].run[k]-got[i].upstream[k])
				rest = append(rest, got[i].wall[k]-got[i].prepared[k]-got[i].run[k]-got[i].commit[k])
			}
			st := [4]time.Duration{p50(got[i].prepared), p50(sandboxed), p50(got[i].commit), p50(rest)}
			stages[o.name] = st
			cols = []string{ms(p50(got[i].run)), ms(st[0]), ms(st[1]), ms(st[2]), ms(st[3])}
		}
		cpu := ""
		if len(got[i].cpu) > 0 {
			cpu = ms(p50(got[i].cpu))
		}
		fmt.Fprintf(&table, "%-30s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", o.name, ms(p50(got[i].wall)), ms(p50(got[i].upstream)), ms(p50(got[i].own)),
			cols[0], cols[1], cols[2], cols[3], cols[4], cpu)
		p[o.name] = p50(got[i].wall)
		p[o.name+"/own"] = p50(got[i].own)
	}
	// Each stage's share of the invokes' own cost (the medians' ratio).
	fmt.Fprintf(&table, "\nshare of own (p50s): prepared, run − upstream, commit, rest\n")
	for _, name := range []string{"fsync/http/invoke-3", "fsync/mcp/proc-3", "tmpfs/http/invoke-3", "tmpfs/mcp/proc-3"} {
		st, own := stages[name], msOf(p[name+"/own"])
		fmt.Fprintf(&table, "%-30s %8.0f%% %8.0f%% %8.0f%% %8.0f%%\n", name, 100*msOf(st[0])/own, 100*msOf(st[1])/own, 100*msOf(st[2])/own, 100*msOf(st[3])/own)
	}
	// The floors, side by side in this run: what an invoke cannot cost
	// less than on this machine with this client. A request from the
	// same client to a server that answers at once; the commit of as many
	// pages, fsync'd on the same disk; a warm worker's run of no call
	// (in this process's pool, parked between runs as the server's is);
	// and each upstream call's own share for a Go client calling the
	// filesystem server straight over stdio (mcpdispatch, the path
	// procgraph calls it by: the pipe and the server's wake-up, which its
	// logged time leaves out).
	commitFloor := p["fsync/bbolt-commit-"+strconv.Itoa(invokeCommitPages)+"p"]
	tmpfsCommit := p["tmpfs/bbolt-commit-"+strconv.Itoa(invokeCommitPages)+"p"]
	callFloor := p["R=0/go/direct-read-3/own"] / 3
	fmt.Fprintf(&table, "\nfloors (p50 ms): HTTP request, Go %s, SDK's httpx2 %s; a commit of %d pages %s (tmpfs %s); a warm worker's run %s; an upstream call's own over stdio %s\n",
		ms(p["floor/http-bare"]), ms(p["sdk/floor/http-bare"]), invokeCommitPages, ms(commitFloor), ms(tmpfsCommit), ms(p["worker/round-trip"]), ms(callFloor))
	// Each operation's floor is a sum of floor operations' times: its
	// own above it is given from the medians and, paired, as the median
	// over the rounds of the round's own − the round's floor (every
	// operation runs once a round: the pair shares the round's load).
	index := map[string]int{}
	for i, o := range ops {
		index[o.name] = i
	}
	commitOp := "fsync/bbolt-commit-" + strconv.Itoa(invokeCommitPages) + "p"
	fmt.Fprintf(&table, "own above its floor (p50 ms): own, floor (HTTP + commit + worker + calls × upstream call), own − floor, paired\n")
	for i, o := range ops {
		http, commit := "floor/http-bare", commitOp
		switch {
		case strings.HasPrefix(o.name, "sdk/mcp/"), strings.HasPrefix(o.name, "sdk/legacy/"):
			http = "sdk/floor/http-bare"
		case strings.HasPrefix(o.name, "tmpfs/"):
			commit = "tmpfs/bbolt-commit-" + strconv.Itoa(invokeCommitPages) + "p"
		case !strings.HasPrefix(o.name, "fsync/"):
			continue
		}
		probe := strings.HasSuffix(o.name, "discover") || strings.HasSuffix(o.name, "ping")
		if o.calls == 0 && !probe {
			continue
		}
		// The floor's terms: operation and multiplier (the direct
		// client's three reads' own, a third of it per call).
		terms := map[string]float64{http: 1}
		if !probe {
			terms[commit] = 1
			terms["worker/round-trip"] = 1
			terms["R=0/go/direct-read-3"] = float64(o.calls) / 3
		}
		var floor time.Duration
		for name, k := range terms {
			if name == "R=0/go/direct-read-3" {
				floor += time.Duration(k * float64(p[name+"/own"]))
			} else {
				floor += time.Duration(k * float64(p[name]))
			}
		}
		var paired []time.Duration
		for r := range got[i].own {
			d := got[i].own[r]
			for name, k := range terms {
				f := got[index[name]]
				if name == "R=0/go/direct-read-3" {
					d -= time.Duration(k * float64(f.own[r]))
				} else {
					d -= time.Duration(k * float64(f.wall[r]))
				}
			}
			paired = append(paired, d)
		}
		fmt.Fprintf(&table, "%-30s %9s %9s %9s %9s\n", o.name, ms(p[o.name+"/own"]), ms(floor), ms(p[o.name+"/own"]-floor), ms(p50(paired)))
	}
	// The break-even: where one proc__ call of three reads (over /mcp,
	// R away) becomes faster than three direct reads (each R away), for
	// the SDK's client and for a lean one (Go: mcpdispatch over stdio,
	// one HTTP request for the proc__ call).
	for _, c := range []struct{ name, direct, through string }{
		{"SDK client", "sdk/direct-read-3", "sdk/mcp/proc-3"},
		{"Go client", "go/direct-read-3", "go/mcp/proc-3"},
	} {
		fmt.Fprintf(&table, "\nbreak-even (%s, p50 ms): R, three direct reads, one proc__ of three, direct − proc__\n", c.name)
		var prevR float64
		var prevDiff time.Duration
		breakEven := -1.0
		for k, r := range invokeDelays {
			direct, through := p["R="+r+"/"+c.direct], p["R="+r+"/"+c.through]
			if r == "0" && c.name == "SDK client" {
				direct, through = p[c.direct], p[c.through]
			}
			rv, _ := strconv.ParseFloat(r, 64)
			diff := direct - through
			fmt.Fprintf(&table, "R=%-5s %9s %9s %9s\n", r, ms(direct), ms(through), ms(diff))
			if breakEven < 0 && diff >= 0 {
				breakEven = rv
				if k > 0 && prevDiff < 0 {
					breakEven = prevR + (rv-prevR)*msOf(-prevDiff)/msOf(diff-prevDiff)
				}
			}
			prevR, prevDiff = rv, diff
		}
		// With each call one round trip, three direct calls gain 3R and
		// the proc__ call R: the two meet at R = (proc__ − direct) / 2 at
		// R = 0.
		model := msOf(p["R=0/"+c.through]-p["R=0/"+c.direct]) / 2
		if c.name == "SDK client" {
			model = msOf(p[c.through]-p[c.direct]) / 2
		}
		fmt.Fprintf(&table, "model: (proc__ − direct) / 2 at R = 0: %.2f ms\n", model)
		if c.name == "Go client" {
			// The same with the server on tmpfs: its commits cost nothing.
			fmt.Fprintf(&table, "model, the server's commits free (tmpfs): %.2f ms\n", msOf(p["tmpfs/mcp/proc-3"]-p["R=0/"+c.direct])/2)
			// The same at the floors: the proc__ call costs at least one
			// request, one commit and one worker's run more than the
			// three direct calls (their stdio round trips are alike).
			fmt.Fprintf(&table, "model at the floors ((HTTP + commit + worker) / 2): %.2f ms\n",
				msOf(p["floor/http-bare"]+p["fsync/bbolt-commit-"+strconv.Itoa(invokeCommitPages)+"p"]+p["worker/round-trip"])/2)
		}
		if breakEven >= 0 {
			fmt.Fprintf(&table, "break-even R ≈ %.2f ms (aim ≤ 1)\n", breakEven)
			b.ReportMetric(breakEven, strings.ToLower(strings.Fields(c.name)[0])+"-break-even-ms")
		} else {
			fmt.Fprintf(&table, "no break-even up to R = %s ms\n", invokeDelays[len(invokeDelays)-1])
		}
	}
	b.ReportMetric(msOf(p["fsync/http/invoke-3/own"]), "http-invoke-own-ms")
	b.ReportMetric(msOf(p["fsync/mcp/proc-3/own"]), "mcp-proc-own-ms")
	b.ReportMetric(msOf(p["worker/round-trip"]), "worker-rt-ms")
	b.ReportMetric(msOf(p["sdk/mcp/discover"]), "sdk-discover-ms")
	b.ReportMetric(msOf(p["sdk/legacy/ping"]), "sdk-legacy-ping-ms")
	ab := ""
	if *heapFloorAB != "" {
		ab = fmt.Sprintf(" (tmpfs/ rows: a second server on disk with --heap-floor %s)", *heapFloorAB)
	}
	b.Logf("an invoke's own cost, %d rounds, load average %.2f → %.2f%s:\n%s", round, loadBefore[0], loadAverage()[0], ab, table.String())
}

// invokeCommitPages is how many pages an invoke's one commit writes on
// the fsync server (strace -e pwrite64 of `procgraph serve` during the
// invokes of BenchmarkInvokeCost: 12 data pages, then the meta page).
const invokeCommitPages = 12

// commitPages rewrites ten values of 3,000 bytes, each alone on its leaf,
// in the bucket "pages": with their branch, the root bucket's page and
// the freelist, a commit of invokeCommitPages pages (and the meta page),
// two fdatasyncs as every bbolt commit.
func commitPages(tx *bolt.Tx, i int) error {
	bk, err := tx.CreateBucketIfNotExists([]byte("pages"))
	if err != nil {
		return err
	}
	v := bytes.Repeat([]byte{byte(i)}, 3000)
	for k := range 10 {
		if err := bk.Put([]byte(strconv.Itoa(k)), v); err != nil {
			return err
		}
	}
	return nil
}
