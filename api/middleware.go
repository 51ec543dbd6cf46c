package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/procgraph/procgraph/auth"
)

// chain is a route's handler behind its middlewares, outermost first:
// request id, request log and metrics, panic recovery, authentication and
// scope, query-parameter and body checks.
func (s *Server) chain(rt route) http.Handler {
	var h http.Handler = s.handle(rt.handler)
	h = s.checkInput(rt, h)
	h = s.authenticate(rt, h)
	h = s.recoverPanics(rt.pattern, h)
	h = s.observe(rt.pattern, h)
	return withRequestID(h)
}

// handle answers a handler's error in the contract's shape.
func (s *Server) handle(f func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// requestInfo is what inner middlewares tell the outer ones about a request.
type requestInfo struct {
	id    string
	actor string // the authenticated holder; "" before authentication
}

type requestInfoKey struct{}

func infoOf(r *http.Request) *requestInfo {
	if i, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// requestID returns the request's id (see withRequestID).
func requestID(r *http.Request) string { return infoOf(r).id }

// withRequestID keeps a caller's well-formed X-Request-Id or makes one,
// and answers it in the X-Request-Id header.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, &requestInfo{id: id})))
	})
}

// observe records the request in the metrics (by route pattern, never the
// path) and logs it: id, method, route, status, duration and actor — never
// a body, a query value or a token.
func (s *Server) observe(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			d := time.Since(start)
			s.metrics.ObserveRequest(route, r.Method, status, d)
			info := infoOf(r)
			s.log.Info().Str("request_id", info.id).Str("method", r.Method).Str("route", route).
				Int("status", status).Dur("duration", d).Str("actor", info.actor).Msg("request")
		}()
		next.ServeHTTP(ww, r)
	})
}

// recoverPanics turns a handler's panic into a logged internal error,
// answered if nothing was written yet.
func (s *Server) recoverPanics(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error().Str("request_id", requestID(r)).Str("route", route).Str("panic", fmt.Sprint(v)).Msg("handler panicked")
			if ww, ok := w.(middleware.WrapResponseWriter); !ok || ww.Status() == 0 {
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// authenticate requires a bearer token holding the route's scope (and
// recordingsScope on a recordings route), or any valid token on an
// anyToken route; the operations endpoints (scope "") require none.
func (s *Server) authenticate(rt route, next http.Handler) http.Handler {
	scope := rt.scope
	if scope == "" && !rt.anyToken {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.auth.Authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="procgraph"`)
			s.writeError(w, r, err)
			return
		}
		infoOf(r).actor = p.Name
		r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		if scope != "" && !p.Has(scope) {
			s.writeError(w, r, auth.Forbidden(scope))
			return
		}
		if rt.recordings {
			if err := checkRecordings(p, rt.method+" "+rt.pattern); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// checkInput refuses unknown or malformed query parameters and, on routes
// with a body, a body not declared as JSON; it bounds the body's size.
func (s *Server) checkInput(rt route, next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, q := range rt.query {
		allowed[q.name] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkQuery(r, rt.query, allowed); err != nil {
			s.writeError(w, r, err)
			return
		}
		if rt.body != "" {
			if err := checkContentType(r); err != nil {
				s.writeError(w, r, err)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, s.maxBody+1)
		}
		next.ServeHTTP(w, r)
	})
}

// principalOf returns the request's authenticated principal.
func principalOf(r *http.Request) auth.Principal {
	p, _ := auth.PrincipalFrom(r.Context())
	return p
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
