package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDoctorServedStoreDown: a running server whose store does not answer
// (/readyz 503) fails doctor's store check, said as such, not as a
// malformed answer.
func TestDoctorServedStoreDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable","store":"unavailable","upstreams":[{"server":"fs","state":"ok"}]}`))
	}))
	defer srv.Close()
	c := &client{base: srv.URL, http: srv.Client()}
	ready, err := servedReadiness(context.Background(), c)
	ch := servedStore(ready, err)
	if ch.Status != checkFail || !strings.Contains(ch.Detail, "the server's store does not answer (/readyz: unavailable)") {
		t.Fatalf("store check: %+v (%v)", ch, err)
	}
	if len(ready.Upstreams) != 1 || ready.Upstreams[0].Server != "fs" {
		t.Fatalf("readiness: %+v", ready)
	}
}
