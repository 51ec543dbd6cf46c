// Package otlptest is an OTLP/HTTP trace receiver for tests: it takes the
// export requests a real exporter sends (protobuf, gzip or not) on
// 127.0.0.1 and keeps their spans, so that a test can read what procgraph
// exported.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span: its name, status code and attributes (values
// as strings).
type Span struct {
	Name       string
	Error      bool
	Attributes map[string]string
	TraceID    string
	SpanID     string
	ParentID   string
}

// Receiver is an OTLP/HTTP trace receiver.
type Receiver struct {
	URL   string // the endpoint to export to (OTEL_EXPORTER_OTLP_ENDPOINT)
	mu    sync.Mutex
	spans []Span
	raw   [][]byte // every request body as received, decompressed
}

// Start starts a receiver, stopped at the end of tb.
func Start(tb testing.TB) *Receiver {
	tb.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.handle))
	tb.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) handle(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, 64<<20)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.raw = append(r.raw, b)
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				span := Span{Name: s.Name, Error: s.Status != nil && s.Status.Code == 2, Attributes: map[string]string{},
					TraceID: hexOf(s.TraceId), SpanID: hexOf(s.SpanId), ParentID: hexOf(s.ParentSpanId)}
				for _, kv := range s.Attributes {
					span.Attributes[kv.Key] = valueString(kv.Value)
				}
				r.spans = append(r.spans, span)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Raw returns every request body received so far (decompressed): what a
// test searches for bytes that must never be exported.
func (r *Receiver) Raw() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.raw...)
}

func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	default:
		return v.String()
	}
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }
