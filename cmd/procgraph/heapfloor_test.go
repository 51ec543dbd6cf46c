package main

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeHoldsTheHeapFloor: a served Main collects a small heap once per
// --heap-floor (the GC percent /metrics reports rises past the runtime's
// 100 after a collection).
func TestServeHoldsTheHeapFloor(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{})
	for deadline := time.Now().Add(5 * time.Second); ; {
		runtime.GC() // the percent follows each collection
		got := metricValue(string(s.get(t, "/metrics").Body), "go_gc_gogc_percent")
		if got > 100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("go_gc_gogc_percent = %v with the default --heap-floor, want above 100", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHeapFloorGivesWayToGOGC: an operator's GOGC is the pacing they
// chose; --heap-floor 0 holds nothing either.
func TestHeapFloorGivesWayToGOGC(t *testing.T) {
	for _, tc := range []struct {
		name  string
		floor int64
		gogc  string
		held  bool
	}{
		{"default floor, no GOGC", 64 << 20, "", true},
		{"GOGC set", 64 << 20, "200", false},
		{"GOGC off", 64 << 20, "off", false},
		{"floor 0", 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logSink{}
			m := NewMain(&serveConfig{HeapFloor: tc.floor}, newLogger(logs, "debug"))
			ctx := context.WithValue(context.Background(), envKey{}, map[string]string{"GOGC": tc.gogc})
			m.keepHeapFloor(ctx)
			defer m.Close()
			if held := len(m.closers) == 1; held != tc.held {
				t.Fatalf("floor held: %v, want %v (logs %s)", held, tc.held, logs.String())
			}
			if said := strings.Contains(logs.String(), "GOGC is set"); said != (tc.gogc != "") {
				t.Fatalf("logs %q: want the GOGC notice only when GOGC is set", logs.String())
			}
		})
	}
}
