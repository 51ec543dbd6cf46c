//go:build unix

package mcpserve

import (
	"syscall"
	"time"
)

// processCPU is this process's CPU time so far, user and system: what
// BenchmarkTurn and BenchmarkPing report per operation beside wall time,
// which holds under the load other work puts on the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
