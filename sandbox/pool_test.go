package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// TestConcurrentRuns: 16 runs at once on a pool of 2 all get their own
// results.
func TestConcurrentRuns(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tool := sandbox.ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (any, error) {
		time.Sleep(time.Millisecond)
		return map[string]any{"double": args["n"].(int64) * 2}, nil
	})
	src := `out = []
for i in range(5):
    out.append(tools.double(n=n + i)["double"])
print("run", n)
return out`
	var wg sync.WaitGroup
	for n := range 16 {
		wg.Go(func() {
			res := run(t, p, src, map[string]any{"n": int64(n * 100)}, []string{"double"}, sandbox.Limits{}, tool)
			want := []any{}
			for i := range 5 {
				want = append(want, int64((n*100+i)*2))
			}
			if res.Err != nil || !reflect.DeepEqual(res.Value, want) || res.Output != fmt.Sprintf("run %d\n", n*100) || len(res.Calls) != 5 {
				t.Errorf("run %d: %#v %q %+v %s", n, res.Value, res.Output, res.Calls, errString(res.Err))
			}
		})
	}
	wg.Wait()
	if s := p.Stats(); s.Busy != 0 || s.Crashed != 0 || s.Live > 8 || s.Started > 8 {
		t.Errorf("stats = %+v", s)
	}
}

// TestHungWorkerKilled: a worker that stops answering is killed after the
// run's timeout and the grace period; the run ends with timeout and the pool
// goes on.
func TestHungWorkerKilled(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pid := sandbox.IdlePIDs(p)[0]
	tool := sandbox.ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (any, error) {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			return nil, err
		}
		for !stopped(pid) { // the stop is asynchronous
			time.Sleep(time.Millisecond)
		}
		return nil, nil
	})
	start := time.Now()
	res := run(t, p, "tools.x()\nreturn 1", nil, []string{"x"}, sandbox.Limits{Timeout: 300 * time.Millisecond}, tool)
	if res.Err == nil || res.Err.Code != sandbox.Timeout || !strings.Contains(res.Err.Message, "killed") {
		t.Fatalf("error = %s; value %v calls %+v", errString(res.Err), res.Value, res.Calls)
	}
	if d := time.Since(start); d < 550*time.Millisecond || d > 3*time.Second {
		t.Errorf("took %v, want about timeout + grace", d)
	}
	if res := run(t, p, "return 3", nil, nil, sandbox.Limits{}, nil); res.Err != nil || res.Value != int64(3) {
		t.Fatalf("next run: %v %s", res.Value, errString(res.Err))
	}
	if s := p.Stats(); s.Killed != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// TestNothingLeaksBetweenRuns: a worker reused for the next run starts from
// fresh globals.
func TestNothingLeaksBetweenRuns(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	src := `x = [] if not seed else [seed]
x.append(1)
return x`
	for _, seed := range []int64{0, 5, 0} {
		res := run(t, p, src, map[string]any{"seed": seed}, nil, sandbox.Limits{}, nil)
		want := []any{int64(1)}
		if seed != 0 {
			want = []any{seed, int64(1)}
		}
		if res.Err != nil || !reflect.DeepEqual(res.Value, want) {
			t.Errorf("seed %d: %#v %s", seed, res.Value, errString(res.Err))
		}
	}
	if s := p.Stats(); s.Started != 1 {
		t.Errorf("worker not reused: %+v", s)
	}
}

// TestBadCommand: a Command that is not a worker fails NewPool.
func TestBadCommand(t *testing.T) {
	tests := []struct {
		name string
		cmd  []string
	}{
		{"exits at once", []string{"/bin/true"}},
		{"no such binary", []string{"/nonexistent/procgraph"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sandbox.NewPool(sandbox.PoolConfig{Command: tc.cmd, Size: 1, StartTimeout: 2 * time.Second})
			if err == nil {
				p.Close()
				t.Fatal("NewPool succeeded")
			}
		})
	}
}

// stopped reports whether process pid is stopped (state T).
func stopped(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && strings.HasPrefix(s[i+1:], " T")
}

// TestMemoryLimitPerRequest: a request whose MaxMemory differs from the
// pool's gets a worker of its own with that limit.
func TestMemoryLimitPerRequest(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1, MaxMemory: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	src := "l = [str(i) + 'x' * 1000 for i in range(n)]\nreturn len(l)"
	tests := []struct {
		name   string
		limit  int64
		n      int64
		code   sandbox.ErrorCode // "" for success
		starts int64             // workers started by this run
	}{
		{"pool limit", 0, 300000, "", 0},
		{"lower limit", 64 << 20, 300000, sandbox.MemoryLimit, 1},
		{"lower limit, small run", 64 << 20, 1000, "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := p.Stats().Started
			res := run(t, p, src, map[string]any{"n": tc.n}, nil, sandbox.Limits{MaxSteps: 1 << 40, MaxMemory: tc.limit}, nil)
			var code sandbox.ErrorCode
			if res.Err != nil {
				code = res.Err.Code
			}
			if code != tc.code {
				t.Fatalf("error = %s, want %q", errString(res.Err), tc.code)
			}
			if got := p.Stats().Started - before; got < tc.starts {
				t.Errorf("started %d workers, want %d", got, tc.starts)
			}
		})
	}
}

// TestIdleWorkersKilled: idle workers killed from outside (SIGKILL) are
// noticed at once, without a run: they leave the idle list, count as
// crashed, and the warm pool is refilled with new processes.
func TestIdleWorkersKilled(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	old := sandbox.IdlePIDs(p)
	if len(old) != 2 {
		t.Fatalf("idle = %v", old)
	}
	for _, pid := range old {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	// No run is made: the pool must see the deaths by itself.
	var s sandbox.PoolStats
	for range 1000 {
		s = p.Stats()
		if s.Crashed == 2 && s.Started == 4 && s.Idle == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.Crashed != 2 || s.Started != 4 || s.Idle != 2 || s.Live != 2 || s.Killed != 0 || s.Busy != 0 {
		t.Fatalf("after killing both idle workers: %+v", s)
	}
	for _, pid := range sandbox.IdlePIDs(p) {
		if slices.Contains(old, pid) {
			t.Fatalf("killed worker %d still idle", pid)
		}
	}
	if res := run(t, p, "return 7", nil, nil, sandbox.Limits{}, nil); res.Err != nil || res.Value != int64(7) {
		t.Fatalf("next run: %v %s", res.Value, errString(res.Err))
	}
	if s := p.Stats(); s.Started != 4 || s.Crashed != 2 {
		t.Errorf("the run after refill started or lost workers: %+v", s)
	}
}
