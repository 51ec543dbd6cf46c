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

// export is GET /v1/export (admin): the store's dump, streamed
// (docs/dumps.md); with with_recordings=true the recordings too, which
// hold tool output and are read only with the grant scope, so that
// needs grant as well.
func (s *Server) export(w http.ResponseWriter, r *http.Request) error {
	opts := dump.DumpOptions{}
	if b := queryBool(r, "with_recordings"); b != nil && *b {
		if !principalOf(r).Has(auth.ScopeGrant) {
			return fault.Errorf(fault.CodeForbidden, "the token lacks the grant scope, which an export with recordings (tool output) needs too").
				WithDetails("scope", string(auth.ScopeGrant))
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
// store's file, taken while serving.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	return s.stream(w, r, "application/octet-stream", "procgraph.db", func(cw *countingWriter) error {
		_, err := s.svc.Backup(r.Context(), cw)
		return err
	})
}
