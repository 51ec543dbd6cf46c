package api

import (
	"net/http/httptest"
	"testing"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/internal/fakeservice"
)

// The fakes implement what the API asks of the layers below it.
var (
	_ Service  = (*fakeservice.Service)(nil)
	_ Replayer = (*fakeservice.Replayer)(nil)
	_ TurnGate = (*fakeservice.Gate)(nil)
)

// fakes are the stand-ins a fake env's Server calls.
type fakes struct {
	svc  *fakeservice.Service
	rp   *fakeservice.Replayer
	gate *fakeservice.Gate
}

// calls is every call the fakes received, service first.
func (f fakes) calls() []string {
	return append(append(f.svc.Calls(), f.rp.Calls()...), f.gate.Calls()...)
}

// mustFakeEnv builds an env whose Server runs over fakes (a catalogue of
// testTools, nothing else) in place of the service, the replayer and the
// turn gate: for the tests of what the transport does (status codes,
// bodies, bounds, scopes, JSON errors), no store or sandbox behind it.
// Only the env's http and srv are set.
func mustFakeEnv(tb testing.TB, authn *auth.Authenticator) (*env, fakes) {
	tb.Helper()
	f := fakes{svc: fakeservice.New(), rp: &fakeservice.Replayer{}, gate: &fakeservice.Gate{}}
	f.svc.Tools = testTools
	srv, err := New(Config{Service: f.svc, Replayer: f.rp, Turns: f.gate, Auth: authn})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return &env{srv: srv, http: hs}, f
}
