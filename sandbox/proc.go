package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// proc is one worker process, seen from the parent. It runs one request at
// a time; the goroutine running it reads the worker's frames itself (no
// reader goroutine, no hand-offs), with read deadlines for the time limits.
type proc struct {
	cmd     *exec.Cmd
	pid     int
	stdin   *os.File // pollable: writes have deadlines
	stdout  *os.File // pollable: reads have deadlines
	in      *frameReader
	sendMu  sync.Mutex // guards out (the run loop and a cancel may both write) and running
	out     *frameWriter
	running uint64 // the run in progress, 0 between runs
	stderr  *tail
	nextRun uint64
	mapped0 uint64 // memory mapped when idle at start
	grown   bool   // mapped grew enough that the worker should be replaced
	idleAt  time.Time

	killedByPool atomic.Bool // the pool killed it (not a crash)
	killOnce     sync.Once
	exit         chan struct{}   // closed when the worker has exited and is reaped
	life         context.Context // cancelled when the worker has exited
	waitErr      error           // set before exit is closed
}

// startProc starts a worker, waits for its hello and applies the hard
// memory limit before the worker is given any code.
//
// onExit, when not nil, is called once the worker has exited and is reaped,
// whatever the reason: the pool learns of a death at once (wait status),
// not when it next hands the worker a run.
func startProc(cfg *PoolConfig, onExit func(*proc)) (*proc, error) {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = append(workerEnviron(),
		// One P: a run is one Starlark thread; a worker uses one core, and
		// its goroutines hand off without waking other threads.
		"GOMAXPROCS=1")
	cmd.Env = append(cmd.Env, cfg.Env...)
	cmd.Env = append(cmd.Env, WorkerEnv+"=1", memoryEnv+"="+strconv.FormatInt(cfg.MaxMemory, 10),
		// One malloc arena: in a cgo binary glibc otherwise reserves 64 MiB
		// of address space per thread, which would eat the memory limit.
		"MALLOC_ARENA_MAX=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &proc{cmd: cmd, stderr: &tail{max: 16 << 10}}
	cmd.Stderr = p.stderr
	// Pipes made here (not cmd.StdinPipe) are pollable, so reads and
	// writes can have deadlines: a hung worker cannot block the parent.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start sandbox worker: %w", err)
	}
	p.pid, p.stdin, p.stdout = cmd.Process.Pid, inW, outR
	p.out, p.in = &frameWriter{w: inW}, newFrameReader(newSpinReader(outR))
	p.exit = make(chan struct{})
	life, dead := context.WithCancel(context.Background())
	p.life = life
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exit)
		dead()
		if onExit != nil {
			onExit(p)
		}
	}()

	_ = p.stdout.SetReadDeadline(time.Now().Add(cfg.StartTimeout))
	m, err := p.in.read()
	_ = p.stdout.SetReadDeadline(time.Time{})
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		p.kill()
		return nil, errors.New("sandbox worker: no hello in time")
	case err != nil:
		p.kill()
		return nil, fmt.Errorf("sandbox worker exited at start (%s); is Command a binary that calls sandbox.RunWorker when sandbox.IsWorker()? stderr: %q", exitStatus(p), p.stderr.firstLine())
	case m.Hello == nil:
		p.kill()
		return nil, errors.New("sandbox worker: no hello")
	}
	p.mapped0 = m.Hello.Mapped
	if err := limitMemory(p.pid, cfg.MaxMemory); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// addressSpaceHeadroom is added to the worker's idle address space and its
// MaxMemory to form its RLIMIT_AS; it covers the runtime's reservation
// granularity (64 MiB heap arenas), its metadata and the stacks of threads
// started during a run (8 MiB each in a cgo binary).
const addressSpaceHeadroom = 128 << 20

// limitMemory sets RLIMIT_AS on the idle worker pid to its current virtual
// size plus maxMemory plus headroom (see the package doc for why).
func limitMemory(pid int, maxMemory int64) error {
	vm, err := vmSize(pid)
	if err != nil {
		return fmt.Errorf("sandbox worker memory limit: %w", err)
	}
	lim := uint64(vm) + uint64(maxMemory)*(1+raceShadow) + addressSpaceHeadroom
	rl := unix.Rlimit{Cur: lim, Max: lim}
	if err := unix.Prlimit(pid, unix.RLIMIT_AS, &rl, nil); err != nil {
		return fmt.Errorf("sandbox worker memory limit: prlimit: %w", err)
	}
	return nil
}

// vmSize reads VmSize (bytes) from /proc/pid/status.
func vmSize(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("bad VmSize %q", v)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmSize in /proc status")
}

// send writes one frame. Writes are bounded by the write deadline the run
// sets on stdin (its hard deadline): a worker that stops reading cannot
// block the parent.
func (p *proc) send(m *message) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	return p.out.write(m)
}

// exited reports whether the worker has exited.
func (p *proc) exited() bool {
	select {
	case <-p.exit:
		return true
	default:
		return false
	}
}

// terminate kills the worker on the pool's initiative.
func (p *proc) terminate() {
	p.killedByPool.Store(true)
	p.kill()
}

// exitStatus describes how a reaped worker ended.
func exitStatus(p *proc) string {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exit status 0"
}

// kill stops the worker for good (SIGKILL to its process group) and reaps it.
func (p *proc) kill() {
	p.killOnce.Do(func() {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
		_ = p.stdin.Close()
		_ = p.stdout.Close()
	})
	p.wait()
}

// closeDead closes the pipes of a worker that has exited and been reaped
// (no signal: its pid may already belong to another process).
func (p *proc) closeDead() {
	p.killOnce.Do(func() {
		_ = p.stdin.Close()
		_ = p.stdout.Close()
	})
}

// wait waits until the worker has exited and is reaped.
func (p *proc) wait() { <-p.exit }

// death says why a worker died by itself during a run.
func (p *proc) death(maxMemory int64) *Error {
	p.kill() // reap, and make sure
	if p.stderr.contains("out of memory") || p.stderr.contains("cannot allocate memory") ||
		// how a -race build says it:
		p.stderr.contains("address space collisions") || p.stderr.contains("ThreadSanitizer failed to allocate") {

		return errorf(MemoryLimit, "the run used more than its memory limit of %d MiB", maxMemory>>20)
	}
	return errorf(RuntimeError, "the sandbox worker died during the run (%s)", exitStatus(p))
}

// tail keeps the last max bytes written to it, plus the first line.
type tail struct {
	mu    sync.Mutex
	max   int
	first []byte
	buf   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first == nil || !bytes.Contains(t.first, []byte("\n")) {
		n := min(len(b), 512-len(t.first))
		t.first = append(t.first, b[:max(n, 0)]...)
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) contains(s string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Contains(t.buf, []byte(s)) || bytes.Contains(t.first, []byte(s))
}

func (t *tail) firstLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	line, _, _ := bytes.Cut(t.first, []byte("\n"))
	return string(line)
}

// reset forgets what was written (between runs).
func (t *tail) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.first, t.buf = nil, t.buf[:0]
}

// workerEnviron is the part of this process's environment a worker gets:
// what the Go runtime, the race detector and coverage read, and nothing
// else. Secrets in the server's environment (NEO4J_PASSWORD, tokens,
// upstream credentials) never reach the process that runs untrusted code.
func workerEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "HOME", name == "TMPDIR", name == "LANG", name == "TZ",
			strings.HasPrefix(name, "GO"), strings.HasPrefix(name, "LC_"):
			env = append(env, kv)
		}
	}
	return env
}
