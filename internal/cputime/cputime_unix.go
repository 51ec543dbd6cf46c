//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is this process's CPU time so far, user and system (0 when
// getrusage fails).
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
