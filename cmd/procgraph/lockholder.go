package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockHolder is the process that holds the lock of the file at path (the
// embedded store's, which serve keeps for as long as it runs): its pid and
// command line, found in /proc/locks by the file's device and inode.
// ok is false when no process holds it or this system cannot tell.
func lockHolder(path string) (pid int, cmdline string, ok bool) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, "", false
	}
	sys, isUnix := st.Sys().(*syscall.Stat_t)
	if !isUnix {
		return 0, "", false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, "", false
	}
	defer f.Close()
	dev := uint64(sys.Dev)
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), sys.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" (a blocked
		// waiter's line has "->" after the number).
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && fields[1] == "->" {
			continue
		}
		if len(fields) < 6 || fields[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + fields[4] + "/cmdline")
		return pid, strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")), true
	}
	return 0, "", false
}

// lockHolderText names the holder of path's lock for a message: "pid 42
// (procgraph serve --data x.db)", or "another process" when it cannot be
// told.
func lockHolderText(path string) string {
	pid, cmd, ok := lockHolder(path)
	if !ok {
		return "another process"
	}
	if cmd == "" {
		return "pid " + strconv.Itoa(pid)
	}
	if len(cmd) > 120 {
		cmd = cmd[:120] + "…"
	}
	return fmt.Sprintf("pid %d (%s)", pid, cmd)
}
