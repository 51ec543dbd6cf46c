package sandbox

import (
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Polling before parking. Parking costs a wake-up of the thread on every
// message: measured on this VM, a pipe round trip between two processes took
// 35–45 µs when both sides parked and about 2.5 µs when they polled, which is
// most of a replay's overhead when its tool calls are quick. A reader
// therefore polls its pipe for up to spinWait before parking, yielding its
// core at every poll (sched_yield): the worker it waits for has usually just
// been woken on that same core, and on a busy machine a poll that did not
// yield would keep it from running at all. Measured (10-call replay, warm
// worker, no-op tools): parking only, 680 µs idle and 260–500 µs with a busy
// core; polling without yielding, 150 µs idle but 1.3–2.5 ms with a busy
// core; polling with yielding, 280 µs idle and 265 µs with a busy core.
const (
	spinWait = 100 * time.Microsecond
	// spinYieldGap: a gap between two polls longer than this means the
	// reader's core ran other work, which does not count as polling.
	spinYieldGap = 10 * time.Microsecond
)

// spinReader reads a pipe, polling it for up to spinWait before parking.
// Read deadlines set on the file still apply.
type spinReader struct {
	f  *os.File
	rc syscall.RawConn
}

// newSpinReader returns a reader of f that polls before parking, or f
// itself when f cannot be used that way.
func newSpinReader(f *os.File) io.Reader {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	return &spinReader{f: f, rc: rc}
}

// Read implements io.Reader.
func (s *spinReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	var spun time.Duration
	last := time.Now()
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = unix.Read(int(fd), b)
			if rerr == unix.EINTR {
				continue
			}
			if rerr != unix.EAGAIN {
				return true
			}
			now := time.Now()
			if d := now.Sub(last); d < spinYieldGap {
				spun += d
			}
			last = now
			if spun >= spinWait {
				return false // park until the pipe is readable
			}
			// Let this process's other goroutines run (in a worker,
			// GOMAXPROCS=1, the block runs beside this reader), then
			// this core's other threads.
			runtime.Gosched()
			_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		}
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
