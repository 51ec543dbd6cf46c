package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/procedures"
)

// errDry ends a capture that inputRecorder was asked to record only.
var errDry = errors.New("bench: recorded, not written")

// inputRecorder keeps the CaptureInput a service passes to its store's
// Capture, so that a benchmark's store call is the very call a request
// makes (its page, catalogue, parameters and code); dry, it writes
// nothing.
type inputRecorder struct {
	last procedures.CaptureInput
	dry  bool
}

func (r *inputRecorder) capture(ctx context.Context, s procedures.Store, in procedures.CaptureInput) (procedures.CaptureResult, error) {
	r.last = in
	if r.dry {
		return procedures.CaptureResult{}, errDry
	}
	return s.Capture(ctx, in)
}

// neo4jRecorder and embeddedRecorder embed their store, so every method
// but Capture, and every optional interface the service checks for, is
// the store's own: the service behaves over them as over the store.
type neo4jRecorder struct {
	*neo4jstore.Store
	rec *inputRecorder
}

func (s neo4jRecorder) Capture(ctx context.Context, in procedures.CaptureInput) (procedures.CaptureResult, error) {
	return s.rec.capture(ctx, s.Store, in)
}

type embeddedRecorder struct {
	*embedded.Store
	rec *inputRecorder
}

func (s embeddedRecorder) Capture(ctx context.Context, in procedures.CaptureInput) (procedures.CaptureResult, error) {
	return s.rec.capture(ctx, s.Store, in)
}

// captureRecorder is a service over t's store, as serve makes it, that
// records the input of each capture.
type captureRecorder struct {
	svc *procedures.Service
	rec *inputRecorder
}

func newCaptureRecorder(b *testing.B, t *target) *captureRecorder {
	b.Helper()
	rec := &inputRecorder{}
	var s procedures.Store
	switch st := t.store.(type) {
	case *neo4jstore.Store:
		s = neo4jRecorder{st, rec}
	case *embedded.Store:
		s = embeddedRecorder{st, rec}
	default:
		b.Fatalf("no recorder for %T", t.store)
	}
	return &captureRecorder{svc: procedures.NewService(s, serveOptions), rec: rec}
}

// input returns the CaptureInput of req's capture; dry, nothing is
// written. Its context counts no statement (countStatements).
func (c *captureRecorder) input(b *testing.B, req procedures.CaptureRequest, dry bool) procedures.CaptureInput {
	b.Helper()
	c.rec.dry = dry
	_, err := c.svc.Capture(context.Background(), req)
	if dry && !errors.Is(err, errDry) || !dry && err != nil {
		b.Fatalf("recording a capture: %v", err)
	}
	return c.rec.last
}
