package sandbox

import (
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// spinWait is how long a protocol read polls its pipe before parking in the
// runtime's poller. Parking costs a wake-up of the thread on every message:
// measured here, a pipe round trip between two processes took 35–45 µs when
// both sides parked and about 2.5 µs when they polled, which is most of a
// replay's overhead when its tool calls are quick. A run's waits are either
// that short (the other side answers at once) or long (a slow tool), where
// 100 µs of polling is noise.
const spinWait = 100 * time.Microsecond

// spinYieldGap: a gap between two polls longer than this means the reader
// yielded to other work, which does not count as polling.
const spinYieldGap = 10 * time.Microsecond

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
	// spun counts the time spent polling, not the time other goroutines ran
	// when this one yielded: in a worker (GOMAXPROCS=1) the block runs
	// beside this reader, and the reader should poll once the block waits.
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
			if spun > spinWait {
				return false // park until the pipe is readable
			}
			runtime.Gosched()
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
