package embedded

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	st "github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// crashWriterEnv makes the test binary a crash writer on the file it names.
const crashWriterEnv = "PROCGRAPH_EMBEDDED_CRASH_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashWriterEnv); path != "" {
		crashWriter(path)
		return
	}
	os.Exit(m.Run())
}

// crashInput is capture i of the crash writer: 50 procedures, 3 versions
// each, a cause, and a usage key of its own.
func crashInput(i int) procedures.CaptureInput {
	sig := []string{fmt.Sprintf("crash_%02d", i%50), "crash_tool"}
	return st.WithCause(st.In(sig, fmt.Sprintf("h%d", i%3), fmt.Sprintf("key-%d", i), st.At(i)), "crash cause", "")
}

// crashWriter captures from 4 goroutines until killed, printing "ack i"
// once capture i is committed.
func crashWriter(path string) {
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := g; ; i += 4 {
				if _, err := s.Capture(ctx, crashInput(i)); err != nil {
					fmt.Println("capture:", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ack %d\n", i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCrashKeepsAcknowledgedCaptures SIGKILLs a writer mid-load, then checks
// that the file opens, passes its check, and holds every acknowledged capture.
func TestCrashKeepsAcknowledgedCaptures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashWriterEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[int]bool{}
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(20 * time.Second)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		n, err := strconv.Atoi(strings.TrimPrefix(line, "ack "))
		if err != nil {
			t.Fatalf("writer: %s", line)
		}
		acked[n] = true
		if !killed && (len(acked) >= 300 || time.Now().After(deadline)) {
			_ = cmd.Process.Signal(syscall.SIGKILL) // mid-load: more acks may be in the pipe
			killed = true
		}
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("writer exited by itself after %d acks", len(acked))
	}

	s := mustOpen(t, path)
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	freq := map[string]int64{}
	for i := range acked {
		in := crashInput(i)
		freq[in.Name]++
		_, err := s.Version(ctx, in.Name, in.Version.CodeHash)
		if err != nil {
			t.Fatalf("acknowledged capture %d lost: %v", i, err)
		}
	}
	for name, want := range freq {
		// Captures may have committed without their ack being printed.
		if p := st.MustGet(t, s, name); p.Frequency < want {
			t.Errorf("%s: frequency %d, but %d captures were acknowledged", name, p.Frequency, want)
		}
	}
	c, _ := st.MustCause(t, s, "crash cause")
	if c.Frequency < int64(len(acked)) {
		t.Errorf("cause frequency %d < %d acknowledged", c.Frequency, len(acked))
	}
	t.Logf("%d captures acknowledged before SIGKILL; cause frequency %d after reopen", len(acked), c.Frequency)
}
