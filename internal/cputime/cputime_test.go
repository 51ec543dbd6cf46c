package cputime

import "testing"

// TestProcessGrows: work done between two readings shows as CPU time.
func TestProcessGrows(t *testing.T) {
	before := Process()
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i % 7
	}
	if Process() <= before {
		t.Fatalf("CPU time did not grow over a busy loop (%d): %v then %v", x, before, Process())
	}
}
