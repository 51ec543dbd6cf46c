package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

func upstream(t *testing.T, h http.HandlerFunc) *replay.HTTPDispatcher {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	d, err := replay.NewHTTPDispatcher(srv.URL, replay.HTTPOptions{Timeout: 2 * time.Second, MaxResponseBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestHTTPDispatcherSuccess(t *testing.T) {
	var got replay.UpstreamRequest
	d := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("method %s, content type %q", r.Method, r.Header.Get("Content-Type"))
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		io.WriteString(w, `{"result": {"jobs": [1, 2], "big": 9007199254740993}}`)
	})
	res, err := d.Dispatch(context.Background(), "get_jobs", map[string]any{"task_id": "42"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Tool != "get_jobs" || got.Arguments["task_id"] != "42" {
		t.Fatalf("upstream saw %+v", got)
	}
	m := res.(map[string]any)
	if m["big"] != json.Number("9007199254740993") {
		t.Fatalf("big = %#v, want the exact integer", m["big"])
	}
	if len(m["jobs"].([]any)) != 2 {
		t.Fatalf("result = %v", res)
	}
}

func TestHTTPDispatcherNullResult(t *testing.T) {
	d := upstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"result": null}`) })
	res, err := d.Dispatch(context.Background(), "get_jobs", nil)
	if err != nil || res != nil {
		t.Fatalf("Dispatch = %v, %v; want nil, nil", res, err)
	}
}

func TestHTTPDispatcherFailures(t *testing.T) {
	secret := "SECRET-BODY-" + strings.Repeat("x", 100)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"error body", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"error": {"message": "job 42 not found"}}`)
		}, "tool get_jobs failed upstream: job 42 not found"},
		{"long error message is bounded", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"error": {"message": "`+strings.Repeat("é", 400)+`"}}`)
		}, "failed upstream: ééé"},
		{"non-200", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, secret)
		}, "upstream answered HTTP 502"},
		{"bad JSON", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, secret) }, "not the expected JSON object"},
		{"neither result nor error", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"other": 1}`) }, "neither result nor error"},
		{"oversized", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"result": "`+strings.Repeat(secret, 20)+`"}`)
		}, "larger than 1024 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := upstream(t, c.handler)
			_, err := d.Dispatch(context.Background(), "get_jobs", map[string]any{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("err leaks the response body: %v", err)
			}
			if len(err.Error()) > 1200 {
				t.Fatalf("err is %d bytes long", len(err.Error()))
			}
		})
	}
}

func TestHTTPDispatcherTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for the handler
	d, err := replay.NewHTTPDispatcher(srv.URL, replay.HTTPOptions{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = d.Dispatch(context.Background(), "slow", nil)
	if se, _ := errors.AsType[*sandbox.Error](err); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer within 50ms") || se == nil || se.Code != sandbox.Timeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("the timeout took %s", time.Since(start))
	}
}

func TestHTTPDispatcherContextCancel(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for the handler
	d, err := replay.NewHTTPDispatcher(srv.URL, replay.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err = d.Dispatch(ctx, "slow", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want canceled", err)
	}
}

func TestHTTPDispatcherUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	d, err := replay.NewHTTPDispatcher(url, replay.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Dispatch(context.Background(), "get_jobs", nil)
	if se, _ := errors.AsType[*sandbox.Error](err); se == nil || se.Code != sandbox.UpstreamUnavailable || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("err = %v, want upstream_unavailable", err)
	}
}

// TestHTTPDispatcherUnavailableAnswers: a gateway's "the server behind me
// is not there" (502, 503, 504) is upstream_unavailable; any other status
// is the tool's failure.
func TestHTTPDispatcherUnavailableAnswers(t *testing.T) {
	for status, want := range map[int]sandbox.ErrorCode{502: sandbox.UpstreamUnavailable, 503: sandbox.UpstreamUnavailable,
		504: sandbox.UpstreamUnavailable, 500: "", 404: ""} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
		d, err := replay.NewHTTPDispatcher(srv.URL, replay.HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Dispatch(context.Background(), "get_jobs", nil)
		srv.Close()
		if err == nil {
			t.Fatalf("HTTP %d: no error", status)
		}
		se, _ := errors.AsType[*sandbox.Error](err)
		if (se == nil && want != "") || (se != nil && se.Code != want) {
			t.Fatalf("HTTP %d: %v, want code %q", status, err, want)
		}
	}
}

func TestNewHTTPDispatcherRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x/y", "http://"} {
		if _, err := replay.NewHTTPDispatcher(u, replay.HTTPOptions{}); err == nil {
			t.Errorf("NewHTTPDispatcher(%q) accepted it", u)
		}
	}
}
