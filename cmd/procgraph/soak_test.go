package main

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// soakRounds is how many operations each of the 8 clients makes in the
// default (short) run: every kind of operation from every client, several
// times over.
const soakRounds = 24

// TestSoak runs concurrent captures, replays, denials and reads against one
// server and checks the counts add up and the server stays healthy: a short
// run of a fixed number of rounds per client by default, 30 s with -soak.
func TestSoak(t *testing.T) {
	rounds, stop := soakRounds, time.Time{}
	if *soak {
		rounds, stop = math.MaxInt, time.Now().Add(30*time.Second)
	}
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, Extra: []string{"--sandbox-workers", "2"}})
	mustCaptureName(t, s, readOnlyCode, "seed")
	mustCaptureName(t, s, killCode, "seed")
	var captures, replays, denials atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; i < rounds && (stop.IsZero() || time.Now().Before(stop)); i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				switch i % 4 {
				case 0:
					s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": key}, nil)
					captures.Add(1)
				case 1:
					mustStatus(t, s.invoke(t, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": i}, "phase": "automatic", "session_id": key}), 200)
					replays.Add(1)
				case 2:
					mustError(t, s.invoke(t, killName, map[string]any{"arguments": map[string]any{"task_id": i}, "phase": "automatic"}), 403, "denied")
					denials.Add(1)
				default:
					mustStatus(t, s.get(t, "/v1/procedures?limit=5"), 200)
				}
			}
		})
	}
	wg.Wait()
	p := mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
	if num(p["frequency"]) != int(1+captures.Load()+replays.Load()) || num(p["use_count"]) != int(replays.Load()) {
		t.Fatalf("frequency %v use_count %v after %d captures and %d replays", p["frequency"], p["use_count"], captures.Load(), replays.Load())
	}
	if n := len(s.decisions(t, "kind=invoke&limit=1000")); int64(n) != min(1000, replays.Load()+denials.Load()) {
		t.Fatalf("%d invoke decisions, want %d", n, replays.Load()+denials.Load())
	}
	for _, tool := range up.tools() {
		if tool == "kill_job" {
			t.Fatal("kill_job reached the upstream")
		}
	}
	t.Logf("%d captures, %d replays, %d denials", captures.Load(), replays.Load(), denials.Load())
	s.mustHealthy(t)
}
