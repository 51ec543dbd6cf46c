package main

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCloseEndsChangeStreams: a GET /v1/changes stream (a console's) is
// open when the server closes: the stream ends as the drain begins, and
// the drain is complete (no "drain incomplete": it did not wait its grace
// out for a stream that never ends by itself).
func TestCloseEndsChangeStreams(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{})
	resp, err := http.Get(s.URL + "/v1/changes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("GET /v1/changes: %d, first line %q, %v", resp.StatusCode, line, err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, rd)
		ended <- err
	}()
	s.Stop(t)
	if err := <-ended; err != nil {
		t.Fatalf("the change stream ended with %v, want its end", err)
	}
	if logs := s.logs.String(); strings.Contains(logs, "drain incomplete") || !strings.Contains(logs, `"message":"stopped"`) {
		t.Fatalf("the drain with a change stream open:\n%s", logs)
	}
}
