package api

import (
	"net/http"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
)

// countingWriter counts what reached the response, so a failure before the
// first byte is still answered with the error shape.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.n == 0 {
		c.WriteHeader(http.StatusOK)
	}
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// stream answers with what write streams to the response (contentType,
// saved as filename). An error before the first byte is the usual error
// answer; after it the connection is cut, so the client never takes a
// short answer for a whole one (a dump without its trailer is refused by
// import anyway).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, contentType, filename string, write func(cw *countingWriter) error) error {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	cw := &countingWriter{ResponseWriter: w}
	err := write(cw)
	if err == nil {
		return nil
	}
	if cw.n == 0 {
		w.Header().Del("Content-Disposition")
		return err
	}
	s.log.Error().Err(err).Str("request_id", requestID(r)).Int64("bytes", cw.n).Msg("stream cut short")
	panic(http.ErrAbortHandler)
}

// recordingsScope is who may read recorded tool output (docs/design.md
// "Who may read recordings"): one rule for every answer that carries
// recordings. GET …/recordings has it as its route scope; GET
// /v1/export?with_recordings=true and GET /v1/backup (a copy of the whole
// store, recordings included) need it besides admin (checkRecordings).
const recordingsScope = auth.ScopeGrant

// checkRecordings refuses p, the caller of an answer that carries
// recordings (what names it), unless it may read them: 403 forbidden,
// details scope, before anything is streamed.
func checkRecordings(p auth.Principal, what string) error {
	if p.Has(recordingsScope) {
		return nil
	}
	return fault.Errorf(fault.CodeForbidden, "the token lacks the %s scope, which %s (recordings: tool output) needs too", recordingsScope, what).
		WithDetails("scope", string(recordingsScope))
}

// export is GET /v1/export (admin): the store's dump, streamed
// (docs/dumps.md); with with_recordings=true the recordings too, which
// hold tool output: checkRecordings.
func (s *Server) export(w http.ResponseWriter, r *http.Request) error {
	opts := dump.DumpOptions{}
	if b := queryBool(r, "with_recordings"); b != nil && *b {
		if err := checkRecordings(principalOf(r), "an export with recordings"); err != nil {
			return err
		}
		opts.Recordings = true
	}
	return s.stream(w, r, "application/x-ndjson", "procgraph.pgdump", func(cw *countingWriter) error {
		if s.dumps == nil {
			return fault.Errorf(fault.CodeInvalid, "this store cannot be exported")
		}
		return dump.Write(r.Context(), s.dumps, cw, opts)
	})
}

// backup is GET /v1/backup (admin): a consistent copy of the embedded
// store's file, taken while serving. The copy holds the recordings, so
// the route needs recordingsScope too (route.recordings).
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	return s.stream(w, r, "application/octet-stream", "procgraph.db", func(cw *countingWriter) error {
		_, err := s.svc.Backup(r.Context(), cw)
		return err
	})
}
