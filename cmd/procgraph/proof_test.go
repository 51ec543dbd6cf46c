package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeServer is another user's listener on a port a serve registered: it
// records every header that reaches it and answers every request with a
// fake approval list. Its proof header is what proof returns for the
// request's challenge (nil: a made-up one).
type fakeServer struct {
	URL string

	mu      sync.Mutex
	auth    []string // Authorization headers that reached it
	headers []string // every header value that reached it
}

func startFakeServer(t *testing.T, addr string, proof func(challenge string) string) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("taking the port %s serve left: %v", addr, err)
	}
	f := &fakeServer{URL: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			f.auth = append(f.auth, a)
		}
		for _, vs := range r.Header {
			f.headers = append(f.headers, vs...)
		}
		f.mu.Unlock()
		if c := r.Header.Get(challengeHeader); c != "" {
			p := "bm90IGEgcHJvb2Y"
			if proof != nil {
				p = proof(c)
			}
			w.Header().Set(proofHeader, p)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"approvals":[{"id":"apr_fake","status":"pending","procedure":"FAKE"}],"next_cursor":""}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return f
}

// sawToken reports whether tok reached f in any header.
func (f *fakeServer) sawToken(tok string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.headers {
		if strings.Contains(h, tok) {
			return true
		}
	}
	return len(f.auth) > 0
}

// TestCLIProvesTheServerBeforeTheToken is the review's scenario: serve is
// killed (its registry entry stays), another user listens on its port,
// and the pid in the entry is reused by a process of the operator. The
// CLI, given no token, sends the registered operator token only to a
// server that proves it holds the per-start secret of the serve that
// wrote the entry: the listener gets no Authorization header (nor the
// token anywhere), the command fails saying so, and nothing is printed as
// the listener's answer. A listener that relays the challenge to another
// live serve of the same user (another start, another secret) fails the
// same way. A token given explicitly is sent as before.
func TestCLIProvesTheServerBeforeTheToken(t *testing.T) {
	t.Chdir(t.TempDir())
	data := filepath.Join(t.TempDir(), "p.db")
	s := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	ft := mustFirstTokens(t, data)
	at := "PROCGRAPH_URL=" + s.URL
	if code, out, errOut := cliProcess(t, []string{at}, "approvals", "list"); code != 0 {
		t.Fatalf("approvals list against the serve that registered: exit %d\n%s%s", code, out, errOut)
	}

	// The credential file is used only as serve wrote it: not through a
	// link (to a copy elsewhere, which another user may have planted), and
	// only when it is the user's own.
	cred := filepath.Join(filepath.Dir(data), "procgraph-operator.token")
	copied := filepath.Join(t.TempDir(), "copy.token")
	if err := os.Rename(cred, copied); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(copied, cred); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cliProcess(t, []string{at}, "approvals", "list"); code != 1 || !strings.Contains(errOut, "is a link") {
		t.Fatalf("a credential file that is a link: exit %d\n%s%s", code, out, errOut)
	}
	if err := os.Rename(copied, cred); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := os.Chown(cred, otherUID, otherUID); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := cliProcess(t, []string{at}, "approvals", "list"); code != 1 || !strings.Contains(errOut, "belongs to another user") {
			t.Fatalf("a credential file of another user: exit %d\n%s%s", code, out, errOut)
		}
		if err := os.Chown(cred, 0, 0); err != nil {
			t.Fatal(err)
		}
	}

	addr, entryFile, entry := mustOrphanEntry(t, s)

	// Another live serve of the operator, another start: its proofs are
	// not the dead serve's.
	other := mustServe(t, serverOpts{Data: filepath.Join(t.TempDir(), "q.db"), DefaultAuth: true})
	relay := func(challenge string) string {
		req, _ := http.NewRequest("GET", other.URL+"/healthz", nil)
		req.Header.Set(challengeHeader, challenge)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return ""
		}
		resp.Body.Close()
		return resp.Header.Get(proofHeader)
	}

	fake := startFakeServer(t, addr, relay)
	code, out, errOut := cliProcess(t, []string{at}, "approvals", "list")
	if fake.sawToken(ft.operator) {
		t.Fatalf("the operator token reached the listener on the dead serve's port:\n%v", fake.auth)
	}
	if code != 1 || !strings.Contains(errOut, "is not the serve that registered") || strings.Contains(out, "apr_fake") || strings.Contains(out, "FAKE") {
		t.Fatalf("approvals list against another user's listener: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// doctor's MCP check speaks through the same proof.
	code, out, errOut = cliProcess(t, []string{at}, "doctor")
	if fake.sawToken(ft.operator) {
		t.Fatalf("doctor sent the operator token to the listener: exit %d\n%s%s", code, out, errOut)
	}

	// An entry without a proof key (an older serve's) is not used.
	delete(entry, "proof_key")
	b, _ := json.Marshal(entry)
	if err := os.WriteFile(entryFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut = cliProcess(t, []string{at}, "approvals", "list"); fake.sawToken(ft.operator) {
		t.Fatalf("the token of an entry without a proof key was sent: exit %d\n%s%s", code, out, errOut)
	}

	// An explicit token is the caller's choice: sent as given.
	code, out, errOut = cliProcess(t, []string{at, "PROCGRAPH_TOKEN=" + ft.agent}, "approvals", "list", "--json")
	if code != 0 || !strings.Contains(out, "apr_fake") || !fake.sawToken(ft.agent) {
		t.Fatalf("an explicit token: exit %d\n%s%s", code, out, errOut)
	}
}

// fakeListenerEnv makes this test binary, run as another user, the fake
// listener of TestCLIProvesTheServerToAnotherUser: it listens on the
// address given, says "ready" on stdout, and appends every header that
// reaches it to the file in fakeRecordEnv.
const (
	fakeListenerEnv = "PROCGRAPH_TEST_FAKE_LISTENER"
	fakeRecordEnv   = "PROCGRAPH_TEST_FAKE_RECORD"
)

func init() {
	addr := os.Getenv(fakeListenerEnv)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, err := os.OpenFile(os.Getenv(fakeRecordEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			_ = r.Header.Write(f)
			_ = f.Close()
		}
		if r.Header.Get(challengeHeader) != "" {
			w.Header().Set(proofHeader, "bm90IGEgcHJvb2Y")
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"approvals":[{"id":"apr_fake","status":"pending","procedure":"FAKE"}],"next_cursor":""}`)
	}))
	os.Exit(1)
}

// TestCLIProvesTheServerToAnotherUser is the review's scenario with two
// real users: the operator's serve is gone (its entry left, its pid
// reused by a process of the operator), and another user (nobody) listens
// on its port. The operator's CLI sends that user nothing of the token.
func TestCLIProvesTheServerToAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the operator and the user who takes the port are two users")
	}
	t.Chdir(t.TempDir())
	data := filepath.Join(t.TempDir(), "p.db")
	s := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	ft := mustFirstTokens(t, data)
	addr, _, _ := mustOrphanEntry(t, s)

	record := filepath.Join(sharedDir(t, 0o777), "record")
	other := otherUserCommand(t, []string{fakeListenerEnv + "=" + addr, fakeRecordEnv + "=" + record})
	stdout, err := other.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the other user's listener: %q", line)
	}

	code, out, errOut := cliProcess(t, []string{"PROCGRAPH_URL=" + s.URL}, "approvals", "list")
	got, _ := os.ReadFile(record)
	if strings.Contains(string(got), ft.operator) || strings.Contains(string(got), "Authorization") {
		t.Fatalf("the other user's listener got the operator token:\n%s", got)
	}
	if !strings.Contains(string(got), challengeHeader) {
		t.Fatalf("the listener saw no challenge (was it reached?):\n%s", got)
	}
	if code != 1 || !strings.Contains(errOut, "is not the serve that registered") || strings.Contains(out, "apr_fake") {
		t.Fatalf("approvals list against another user's listener: exit %d\n%s%s", code, out, errOut)
	}
}

// mustOrphanEntry leaves what a kill -9 of serve s leaves, as the review
// did: s stopped, its registry entry as serve wrote it, and the entry's pid
// reused by a live process of the operator (a sleep). It returns s's
// address, the entry's file and the entry.
func mustOrphanEntry(t *testing.T, s *server) (addr, entryFile string, entry map[string]any) {
	t.Helper()
	dir, err := credentialsDir()
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimPrefix(s.URL, "http://")
	host, port, _ := net.SplitHostPort(addr)
	entryFile = filepath.Join(dir, credentialKey(host, port)+".json")
	b, err := os.ReadFile(entryFile)
	if err != nil {
		t.Fatalf("serve registered no entry: %v", err)
	}
	if err := json.Unmarshal(b, &entry); err != nil {
		t.Fatal(err)
	}
	s.Stop(t)
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	entry["pid"] = sleeper.Process.Pid
	b, _ = json.Marshal(entry)
	if err := os.WriteFile(entryFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return addr, entryFile, entry
}
