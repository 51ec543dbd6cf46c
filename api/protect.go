package api

import (
	"net"
	"net/http"
	"strings"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
)

// Protect guards h against browsers: it refuses non-safe cross-origin
// requests (CSRF: a page on another site posting to procgraph), and, when
// no tokens are configured, any request whose Host is not a loopback name
// (DNS rebinding: a page whose name resolves to 127.0.0.1 would otherwise
// reach the tokenless, every-scope server as same-origin). Refusals use
// the API's error shape with code forbidden. Every answer, refused or not,
// carries X-Content-Type-Options: nosniff (noSniff): Protect is that
// header's one home, wrapping the routes, the console and MCP alike.
func Protect(h http.Handler, authn *auth.Authenticator) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeAnswer(w, fault.Errorf(fault.CodeForbidden, "cross-origin requests that change state are refused").
			WithDetails("reason", "cross_origin"))
	}))
	guarded := cop.Handler(h)
	tokenless := !authn.Enabled()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noSniff(w)
		if tokenless && !loopbackHost(r.Host) {
			writeAnswer(w, fault.Errorf(fault.CodeForbidden, "without tokens procgraph answers only requests addressed to a loopback host").
				WithDetails("reason", "host_not_loopback"))
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine's loopback:
// localhost, 127.0.0.0/8 or ::1, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// noSniff marks an answer X-Content-Type-Options: nosniff, so a browser
// never reads a body (a stored value, a DOT label, a dump line) as anything
// but its Content-Type. Protect calls it before anything else, so every
// answer carries it: routes, errors, refusals, streams, metrics, the
// console and MCP.
func noSniff(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
