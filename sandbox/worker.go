package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/procgraph/procgraph/internal/jsonvalue"
)

// Environment variables the pool sets for its workers.
const (
	// WorkerEnv marks a process as a sandbox worker (value "1").
	WorkerEnv = "PROCGRAPH_SANDBOX_WORKER"
	// memoryEnv carries the worker's memory limit in bytes (the soft GC
	// limit; the hard limit is set by the parent).
	memoryEnv = "PROCGRAPH_SANDBOX_MAX_MEMORY"
)

// IsWorker reports whether this process was started as a sandbox worker by
// a Pool (the environment variable WorkerEnv is "1"). A binary that hosts
// a Pool must check it first thing in main:
//
//	if sandbox.IsWorker() { os.Exit(sandbox.RunWorker()) }
func IsWorker() bool { return os.Getenv(WorkerEnv) == "1" }

// ExitIfWorker runs the worker and exits if this process is a sandbox
// worker; otherwise it returns at once. Call it first in main, or in the
// TestMain of a package whose tests use a Pool (the test binary is then the
// worker):
//
//	func TestMain(m *testing.M) { sandbox.ExitIfWorker(); os.Exit(m.Run()) }
func ExitIfWorker() {
	if IsWorker() {
		os.Exit(RunWorker())
	}
}

// RunWorker serves one parent over stdin and stdout until stdin reaches EOF
// and returns the process exit code. File descriptor 1 is redirected to
// stderr first, so nothing but frames reaches the parent.
func RunWorker() int {
	if n, err := strconv.ParseInt(os.Getenv(memoryEnv), 10, 64); err == nil && n > 0 {
		debug.SetMemoryLimit(n)
	}
	out, err := unix.Dup(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker:", err)
		return 1
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker:", err)
		return 1
	}
	// Nonblocking stdin: reads park the goroutine in the poller instead
	// of holding a thread in read(2), which cuts a call's round trip.
	if err := unix.SetNonblock(0, true); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker:", err)
		return 1
	}
	w := &worker{
		in:  newFrameReader(newSpinReader(os.NewFile(0, "sandbox-stdin"))),
		out: &frameWriter{w: os.NewFile(uintptr(out), "sandbox-protocol")},
	}
	if err := w.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker:", err)
		return 1
	}
	return 0
}

// worker is the worker side of the protocol: it runs one block at a time.
type worker struct {
	in *frameReader

	mu  sync.Mutex // guards out and cur
	out *frameWriter
	cur *workerRun
}

// workerRun is the run in progress.
type workerRun struct {
	id      uint64
	cancel  context.CancelFunc
	pending uint64 // id of the call awaiting a result, 0 if none
	replies chan *resultMsg
}

func (w *worker) send(m *message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.write(m)
}

func (w *worker) serve() error {
	if err := w.send(&message{Hello: &helloMsg{PID: os.Getpid(), Mapped: mapped()}}); err != nil {
		return err
	}
	for {
		m, err := w.in.read()
		if err != nil {
			w.mu.Lock()
			if w.cur != nil {
				w.cur.cancel()
			}
			w.mu.Unlock()
			return nil // the parent is gone or hung up: nothing to answer
		}
		switch {
		case m.Run != nil:
			w.mu.Lock()
			busy := w.cur != nil
			w.mu.Unlock()
			if busy {
				return fmt.Errorf("protocol: run %d while a run is in progress", m.Run.ID)
			}
			w.start(m.Run)
		case m.CallResult != nil:
			w.mu.Lock()
			if r := w.cur; r != nil && r.id == m.CallResult.Run && r.pending == m.CallResult.ID {
				r.pending = 0
				r.replies <- m.CallResult
			}
			w.mu.Unlock()
		case m.Cancel != nil:
			w.mu.Lock()
			if r := w.cur; r != nil && r.id == m.Cancel.Run {
				r.cancel()
			}
			w.mu.Unlock()
		}
	}
}

// start runs m on its own goroutine; the reader keeps reading.
func (w *worker) start(m *runMsg) {
	lim := m.Limits.withDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), lim.Timeout)
	r := &workerRun{id: m.ID, cancel: cancel, replies: make(chan *resultMsg, 1)}
	w.mu.Lock()
	w.cur = r
	w.mu.Unlock()
	go func() {
		defer cancel()
		done := w.execute(ctx, r, m, lim)
		w.mu.Lock()
		w.cur = nil
		w.mu.Unlock()
		done.Mapped = mapped()
		if err := w.send(&message{Done: done}); err != nil {
			os.Exit(1) // the parent is gone
		}
	}()
}

func (w *worker) execute(ctx context.Context, r *workerRun, m *runMsg, lim Limits) (done *doneMsg) {
	done = &doneMsg{Run: m.ID}
	defer func() {
		if p := recover(); p != nil {
			done.Value, done.Error = nil, internalError()
		}
	}()
	req := &Request{Filename: m.Filename, Source: m.Source, Limits: lim}
	if len(m.Args) > 0 {
		args, err := jsonvalue.Decode(m.Args)
		if err != nil {
			done.Error = errorf(RuntimeError, "bad arguments: %v", err)
			return done
		}
		if args != nil {
			a, ok := args.(map[string]any)
			if !ok {
				done.Error = errorf(RuntimeError, "arguments are not an object")
				return done
			}
			req.Args = a
		}
	}
	o := execute(ctx, req, &workerCaller{ctx: ctx, w: w, r: r})
	done.Output, done.Error = o.output, o.err
	if o.err == nil {
		done.Value = o.raw
	}
	return done
}

// workerCaller asks the parent for each call and waits for the answer.
type workerCaller struct {
	ctx  context.Context
	w    *worker
	r    *workerRun
	next uint64
}

func (c *workerCaller) call(name string, args map[string]any) (any, *Error) {
	raw, err := appendJSON(nil, args)
	if err != nil {
		return nil, toolErrorf(RuntimeError, name, "tools.%s: %v", name, err)
	}
	c.next++
	c.w.mu.Lock()
	c.r.pending = c.next
	err = c.w.out.write(&message{Call: &callMsg{Run: c.r.id, ID: c.next, Tool: name, Args: raw}})
	if err != nil {
		c.r.pending = 0
	}
	c.w.mu.Unlock()
	if errors.Is(err, errTooLarge) {
		// Nothing was sent: the call fails the run, the worker lives on.
		return nil, toolErrorf(RuntimeError, name, "tools.%s cannot be called: %v", name, err)
	}
	if err != nil {
		os.Exit(1) // the parent is gone
	}
	select {
	case res := <-c.r.replies:
		if res.Error != nil {
			return nil, res.Error
		}
		v, err := jsonvalue.Decode(res.Value)
		if err != nil {
			return nil, toolErrorf(ToolFailed, name, "tools.%s returned a value that is not JSON: %v", name, err)
		}
		return v, nil
	case <-c.ctx.Done():
		c.w.mu.Lock()
		c.r.pending = 0
		c.w.mu.Unlock()
		return nil, toolErrorf(Timeout, name, "%s during tools.%s", stopReason(c.ctx), name)
	}
}

var mappedSample = []metrics.Sample{{Name: "/memory/classes/total:bytes"}}

// mapped returns the memory the Go runtime has mapped. It only grows: Go
// keeps its heap arenas, which count against the worker's address-space
// limit.
func mapped() uint64 {
	metrics.Read(mappedSample)
	if mappedSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return mappedSample[0].Value.Uint64()
}
