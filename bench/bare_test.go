package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// bareHTTPEnv, set, makes the test binary a bare HTTP server
// (runBareHTTP): the floor of an HTTP round trip between two processes
// that BenchmarkInvokeCost puts beside procgraph's requests.
const bareHTTPEnv = "PROCGRAPH_BENCH_BARE_HTTP"

// bareAnswer is what the bare server answers every request with: a
// JSON-RPC result about the size of server/discover's.
var bareAnswer = []byte(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"bare","version":"v0"}}}` + "\n")

// runBareHTTP is the bare server's main: it listens on loopback, prints
// its address on stdout, and answers every request, its body read, with
// bareAnswer as a JSON body (what a server can do at the least for a
// request). It returns when stdin closes.
func runBareHTTP() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare http:", err)
		return 1
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(bareAnswer)
		}))
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startBareHTTP starts the bare server in a process of its own and
// returns its URL.
func startBareHTTP(b *testing.B) string {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), bareHTTPEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	shared.cleanup = append(shared.cleanup, func() { _ = in.Close(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("the bare HTTP server did not start: %v", err)
	}
	return "http://" + strings.TrimSpace(addr)
}
