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
// most of a replay's overhead when its tool calls are quick. But polling
// takes a core, and when the cores are busy it keeps the other side from
// running at all. So the budget adapts: a poll that finds its message grows
// it (up to maxSpin), one that runs out halves it, so a busy machine soon
// stops polling and an idle one keeps doing it.
const (
	maxSpin = 100 * time.Microsecond
	// spinYieldGap: a gap between two polls longer than this means the
	// reader yielded to other work, which does not count as polling.
	spinYieldGap = 10 * time.Microsecond
)

// spinReader reads a pipe, polling it for up to its budget before parking.
// Read deadlines set on the file still apply. It is used by one goroutine
// at a time.
type spinReader struct {
	f      *os.File
	rc     syscall.RawConn
	budget time.Duration
}

// newSpinReader returns a reader of f that polls before parking, or f
// itself when f cannot be used that way.
func newSpinReader(f *os.File) io.Reader {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	return &spinReader{f: f, rc: rc, budget: maxSpin}
}

// Read implements io.Reader.
func (s *spinReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	var spun time.Duration
	parked := false
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
			if parked || spun >= s.budget {
				parked = true
				return false // park until the pipe is readable
			}
			// Let this process's other goroutines run meanwhile: in a
			// worker (GOMAXPROCS=1) the block runs beside this reader.
			runtime.Gosched()
		}
	})
	if parked {
		s.budget /= 2
	} else {
		s.budget = min(maxSpin, 2*s.budget+time.Microsecond)
	}
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
