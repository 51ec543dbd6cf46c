package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// PoolConfig configures a Pool. Zero fields take the defaults.
type PoolConfig struct {
	// Command starts a worker: a binary that calls RunWorker when IsWorker.
	// Default: this executable (os.Executable()), no arguments.
	Command []string
	// Env is added to the workers' environment, after the few variables
	// they get from this process (workerEnviron: never its secrets).
	Env []string
	// Size is the number of warm workers kept ready. Default 2.
	Size int
	// MaxWorkers caps the workers alive at once; runs beyond it wait.
	// Default 4×Size.
	MaxWorkers int
	// MaxMemory is the hard memory limit of each worker. Default 256 MiB.
	MaxMemory int64
	// Grace is how long a worker may take to stop after its run's time is
	// up or its context is cancelled before it is killed. Default 2s.
	Grace time.Duration
	// StartTimeout bounds a worker's start. Default 10s.
	StartTimeout time.Duration
	// IdleTimeout: workers above Size idle this long are stopped. Default 30s.
	IdleTimeout time.Duration
	// MaxCallBytes bounds one tool call's arguments and its result, as
	// JSON; default DefaultMaxCallBytes. Larger arguments are never read
	// by the server (runtime_error); a larger result fails the call
	// (tool_failed).
	MaxCallBytes int
	// Budget, when set, bounds the bytes of tool calls the server holds at
	// once, shared by every pool given it; nil: only MaxCallBytes bounds.
	Budget *Budget
	// Logger receives worker lifecycle events (pid, exit status,
	// classification; never code, arguments or output). Zero value: silent.
	Logger zerolog.Logger
}

// PoolStats are the pool's counters, for /metrics.
type PoolStats struct {
	Idle    int64 // workers waiting for a run
	Busy    int64 // workers running a block
	Live    int64 // workers alive (idle, busy or starting)
	Started int64 // workers started since the pool was made
	Crashed int64 // workers that died by themselves or were killed from outside, running or idle (memory limit, crash, external kill)
	Killed  int64 // workers the pool killed (hung past the grace period, protocol violation)
	// Started, Crashed and Killed only grow; Live = Started − Crashed −
	// Killed − the workers stopped normally (idle timeout, one-off, Close).
}

// Pool runs requests in worker processes kept warm. It implements Runner
// and is safe for concurrent use.
type Pool struct {
	cfg   PoolConfig
	slots chan struct{}

	mu     sync.Mutex
	idle   []*proc
	closed bool

	live, busy, started, crashed, killed atomic.Int64

	stop    chan struct{}
	janitor sync.WaitGroup
}

// NewPool starts cfg.Size workers and returns the pool. It fails if a
// worker cannot be started or cannot be given its memory limit.
func NewPool(cfg PoolConfig) (*Pool, error) {
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox pool: %w", err)
		}
		cfg.Command = []string{exe}
	}
	if cfg.Size <= 0 {
		cfg.Size = 2
	}
	if cfg.MaxWorkers < cfg.Size {
		cfg.MaxWorkers = 4 * cfg.Size
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	if cfg.MaxCallBytes <= 0 || cfg.MaxCallBytes > maxFrame-(64<<10) {
		cfg.MaxCallBytes = min(max(cfg.MaxCallBytes, 0), maxFrame-(64<<10))
		if cfg.MaxCallBytes == 0 {
			cfg.MaxCallBytes = DefaultMaxCallBytes
		}
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 2 * time.Second
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	p := &Pool{cfg: cfg, slots: make(chan struct{}, cfg.MaxWorkers), stop: make(chan struct{})}
	errs := make(chan error, cfg.Size)
	for range cfg.Size {
		go func() {
			w, err := p.startWorker(&p.cfg)
			if err == nil {
				p.putIdle(w)
			}
			errs <- err
		}()
	}
	var err error
	for range cfg.Size {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	p.janitor.Add(1)
	go p.reap()
	return p, nil
}

// Run runs req in a worker. A worker that crashes, runs out of memory or
// hangs fails this run only: it is killed and replaced.
//
// Limits.MaxMemory zero means PoolConfig.MaxMemory; any other value than
// PoolConfig.MaxMemory gets a worker of its own, started for this run.
func (p *Pool) Run(ctx context.Context, req Request, tools ToolCaller) Result {
	if req.Limits.MaxMemory <= 0 {
		req.Limits.MaxMemory = p.cfg.MaxMemory
	}
	req.Limits = req.Limits.withDefaults()
	cfg := &p.cfg
	oneOff := req.Limits.MaxMemory != cfg.MaxMemory
	if oneOff {
		// A worker's memory limit is set once, at its start: a request
		// with another limit gets a worker of its own.
		c := *cfg
		c.MaxMemory = req.Limits.MaxMemory
		cfg = &c
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return Result{Calls: []Call{}, Err: errorf(Timeout, "the run was cancelled while waiting for a sandbox worker")}
	}
	defer func() { <-p.slots }()
	// A slot and a done context can both be ready (select picks either):
	// a run whose caller is gone does not start.
	if ctx.Err() != nil {
		return Result{Calls: []Call{}, Err: errorf(Timeout, "%s before a sandbox worker took it", stopReason(ctx))}
	}
	// The wait for a worker counted against the run's deadline: the run
	// gets what is left of it.
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return Result{Calls: []Call{}, Err: errorf(Timeout, "the run's deadline passed before a sandbox worker was free")}
		}
		req.Limits.Timeout = min(req.Limits.Timeout, left)
	}

	w := p.getIdle(oneOff)
	for w != nil && w.exited() { // died while idle: not this run's fault
		p.lost(w, nil)
		w = p.getIdle(false)
	}
	if w == nil {
		var err error
		if w, err = p.startWorker(cfg); err != nil {
			p.cfg.Logger.Error().Err(err).Msg("sandbox: cannot start a worker")
			return Result{Calls: []Call{}, Err: errorf(RuntimeError, "no sandbox worker could be started")}
		}
	}
	p.busy.Add(1)
	res, healthy := w.run(ctx, &req, tools, cfg)
	p.busy.Add(-1)
	if !healthy {
		p.lost(w, res.Err)
	} else if oneOff || w.grown {
		p.retire(w)
		p.replenish()
	} else {
		p.putIdle(w)
	}
	return res
}

func (p *Pool) startWorker(cfg *PoolConfig) (*proc, error) {
	p.live.Add(1)
	w, err := startProc(cfg, p.exited)
	if err != nil {
		p.live.Add(-1)
		return nil, err
	}
	p.started.Add(1)
	return w, nil
}

// exited is called when a worker has exited. A worker that dies while
// idle (killed from outside, crashed) is taken out of the idle list and
// accounted for at once, and the warm pool is refilled; a worker that
// exits in any other state (running, retired, killed) is accounted for by
// whoever holds it.
func (p *Pool) exited(w *proc) {
	p.mu.Lock()
	i := slices.Index(p.idle, w)
	if i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
	}
	p.mu.Unlock()
	if i < 0 {
		return
	}
	w.closeDead()
	p.live.Add(-1)
	p.crashed.Add(1)
	p.cfg.Logger.Warn().Int("pid", w.pid).Str("exit", exitStatus(w)).Msg("sandbox: an idle worker died")
	p.replenish()
}

// getIdle pops the most recently used idle worker, or returns nil.
func (p *Pool) getIdle(none bool) *proc {
	if none {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return w
	}
	return nil
}

func (p *Pool) putIdle(w *proc) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.retire(w)
		return
	}
	w.idleAt = time.Now()
	p.idle = append(p.idle, w)
	p.mu.Unlock()
}

// retire stops a healthy worker.
func (p *Pool) retire(w *proc) {
	_ = w.stdin.Close() // EOF: the worker exits by itself
	go func() {
		t := time.AfterFunc(p.cfg.Grace, w.kill)
		w.wait()
		t.Stop()
		_ = w.stdout.Close()
	}()
	p.live.Add(-1)
}

// lost accounts for a worker that failed a run (it is already dead) and
// starts a replacement when fewer than Size are alive.
func (p *Pool) lost(w *proc, e *Error) {
	w.kill()
	p.live.Add(-1)
	if w.killedByPool.Load() {
		p.killed.Add(1)
	} else {
		p.crashed.Add(1)
	}
	var code ErrorCode
	if e != nil {
		code = e.Code
	}
	p.cfg.Logger.Warn().Int("pid", w.pid).Str("exit", exitStatus(w)).Str("code", string(code)).
		Bool("killed_by_pool", w.killedByPool.Load()).Msg("sandbox: worker lost")
	p.replenish()
}

// replenish starts a worker in the background when fewer than Size are
// alive.
func (p *Pool) replenish() {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed || p.live.Load() >= int64(p.cfg.Size) {
		return
	}
	go func() {
		nw, err := p.startWorker(&p.cfg)
		if err != nil {
			p.cfg.Logger.Error().Err(err).Msg("sandbox: cannot replace a worker")
			return
		}
		p.putIdle(nw)
	}()
}

// reap stops the workers above Size that have been idle for IdleTimeout.
func (p *Pool) reap() {
	defer p.janitor.Done()
	t := time.NewTicker(p.cfg.IdleTimeout / 2)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		var old []*proc
		p.mu.Lock()
		for len(p.idle) > p.cfg.Size && time.Since(p.idle[0].idleAt) > p.cfg.IdleTimeout {
			old = append(old, p.idle[0])
			p.idle = p.idle[1:]
		}
		p.mu.Unlock()
		for _, w := range old {
			p.retire(w)
		}
	}
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	idle := int64(len(p.idle))
	p.mu.Unlock()
	return PoolStats{
		Idle: idle, Busy: p.busy.Load(), Live: p.live.Load(),
		Started: p.started.Load(), Crashed: p.crashed.Load(), Killed: p.killed.Load(),
	}
}

// Close stops the idle workers; busy ones stop when their run ends. Runs
// started after Close get fresh workers that are stopped after the run.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	close(p.stop)
	p.janitor.Wait()
	for _, w := range idle {
		p.retire(w)
	}
	return nil
}
