package embedded

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	st "github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// crashWriterEnv makes the test binary a crash writer on the file it
// names; crashBurstEnv, when set, stops it after that many captures.
const (
	crashWriterEnv = "PROCGRAPH_EMBEDDED_CRASH_WRITER"
	crashBurstEnv  = "PROCGRAPH_EMBEDDED_CRASH_BURST"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashWriterEnv); path != "" {
		burst, _ := strconv.Atoi(os.Getenv(crashBurstEnv))
		crashWriter(path, burst)
		return
	}
	os.Exit(m.Run())
}

// crashInput is capture i of the crash writer: 50 procedures, 3 versions
// each, a cause, a usage key of its own and a word of its own in the
// summary (so in the procedure's search text).
func crashInput(i int) procedures.CaptureInput {
	sig := []string{fmt.Sprintf("crash_%02d", i%50), "crash_tool"}
	in := st.WithCause(st.In(sig, fmt.Sprintf("h%d", i%3), fmt.Sprintf("key-%d", i), st.At(i)), "crash cause", "")
	in.Version.Summary = crashWord(i)
	return in
}

// crashWord is the search word of capture i.
func crashWord(i int) string { return fmt.Sprintf("crashword%d", i) }

// crashWriter captures from 4 goroutines until killed, printing "ack i"
// once capture i is committed. With burst > 0 it stops after captures 0 to
// burst-1, prints "quiet" and waits to be killed (while the search index
// catches up).
func crashWriter(path string, burst int) {
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := g; burst == 0 || i < burst; i += 4 {
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
	fmt.Println("quiet")
	select {}
}

// runCrashWriter runs a crash writer on path and SIGKILLs it mid-load (after
// 300 acknowledgements), or with burst > 0 as soon as its burst is
// acknowledged; it returns the acknowledged captures.
func runCrashWriter(t *testing.T, path string, burst int) map[int]bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashWriterEnv+"="+path, crashBurstEnv+"="+strconv.Itoa(burst))
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
		if line == "quiet" && burst > 0 {
			_ = cmd.Process.Signal(syscall.SIGKILL) // the index may still be catching up
			killed = true
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(line, "ack "))
		if err != nil {
			t.Fatalf("writer: %s", line)
		}
		acked[n] = true
		if !killed && burst == 0 && (len(acked) >= 300 || time.Now().After(deadline)) {
			_ = cmd.Process.Signal(syscall.SIGKILL) // mid-load: more acks may be in the pipe
			killed = true
		}
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("writer exited by itself after %d acks", len(acked))
	}
	return acked
}

// TestCrashKeepsAcknowledgedCaptures SIGKILLs a writer mid-load, then checks
// that the file opens, passes its check, and holds every acknowledged
// capture, and that a search finds each (the index is written after the
// commits, so the kill leaves some unindexed: the reopen must see it).
func TestCrashKeepsAcknowledgedCaptures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	acked := runCrashWriter(t, path, 0)
	checkAfterCrash(t, path, acked)
}

// TestCrashWhileIndexing SIGKILLs writers right after their last capture
// returned, while the search index may still be catching up, and checks
// that after reopening a search finds every capture (an index that
// recorded a generation ahead of its documents would not be rebuilt).
func TestCrashWhileIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	for round := range 5 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("crash%d.db", round))
		acked := runCrashWriter(t, path, 200)
		if len(acked) != 200 {
			t.Fatalf("round %d: %d captures acknowledged, want 200", round, len(acked))
		}
		checkAfterCrash(t, path, acked)
	}
}

// checkAfterCrash opens the file a crash writer left and checks it against
// the acknowledged captures.
func checkAfterCrash(t *testing.T, path string, acked map[int]bool) {
	t.Helper()
	s := mustOpen(t, path)
	defer s.Close()
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
	for i := range acked {
		if i >= 50*(search.MaxParts-8) {
			continue // past the procedure's parts limit: its word may not be kept
		}
		in := crashInput(i)
		if got := st.MustSearchNames(t, s, crashWord(i)); !slices.Equal(got, []string{in.Name}) {
			t.Errorf("acknowledged capture %d: %s finds %v after reopen, want %s", i, crashWord(i), got, in.Name)
		}
	}
	c, _ := st.MustCause(t, s, "crash cause")
	if c.Frequency < int64(len(acked)) {
		t.Errorf("cause frequency %d < %d acknowledged", c.Frequency, len(acked))
	}
	t.Logf("%d captures acknowledged before SIGKILL; cause frequency %d after reopen", len(acked), c.Frequency)
}
