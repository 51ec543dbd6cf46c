package sandbox

import (
	"context"
	"testing"
	"time"
)

// TestLateCancelSparesTheNextRun: the cancellation of a run whose caller
// gave up just as it ended can fire after the worker went back to the pool
// and started another run (context.AfterFunc's callback runs on its own
// goroutine and stop does not wait for it). That late callback must not
// touch the worker: it used to cut the next run's deadlines to the grace
// period, so an unrelated run failed with timeout and its worker was
// killed. The late callback is played here, deterministically, while the
// next run waits in a tool call longer than the grace period.
func TestLateCancelSparesTheNextRun(t *testing.T) {
	const grace = 100 * time.Millisecond
	p, err := NewPool(PoolConfig{Size: 1, MaxWorkers: 1, Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	noTools := ToolCallerFunc(func(context.Context, string, map[string]any) (any, error) { return nil, nil })
	if res := p.Run(ctx, Request{Source: "return 1"}, noTools); res.Err != nil {
		t.Fatalf("first run: %v", res.Err)
	}
	p.mu.Lock()
	if len(p.idle) != 1 {
		p.mu.Unlock()
		t.Fatalf("%d idle workers, want 1", len(p.idle))
	}
	w := p.idle[0]
	first := w.nextRun
	p.mu.Unlock()

	inCall, release := make(chan struct{}), make(chan struct{})
	slow := ToolCallerFunc(func(context.Context, string, map[string]any) (any, error) {
		close(inCall)
		<-release
		return "ok", nil
	})
	done := make(chan Result, 1)
	go func() {
		done <- p.Run(ctx, Request{Source: "return tools.wait()", Allowed: []string{"wait"}}, slow)
	}()
	<-inCall
	w.cancelRun(first, grace) // the first run's callback, late
	time.Sleep(3 * grace)
	close(release)
	res := <-done
	if res.Err != nil || res.Value != "ok" {
		t.Fatalf("the next run = %v, %v; want ok (a late cancel of the run before it cut its deadline)", res.Value, res.Err)
	}
	if s := p.Stats(); s.Killed != 0 || s.Crashed != 0 {
		t.Fatalf("stats %+v: a worker was lost", s)
	}
}
