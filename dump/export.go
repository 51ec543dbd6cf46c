package dump

import (
	"context"
	"io"

	"github.com/procgraph/procgraph/internal/buildinfo"
)

// Write writes a whole dump of st to w: header, records, trailer (with
// the recordings only when opts.Recordings). Returns Dump's and the
// writer's errors.
func Write(ctx context.Context, st Source, w io.Writer, opts DumpOptions) error {
	dw := NewWriter(w, st.DumpSource(), buildinfo.Version())
	var sink Sink = dw
	if opts.Progress != nil {
		sink = &progressSink{Sink: dw, progress: opts.Progress}
	}
	if err := st.Dump(ctx, sink, opts); err != nil {
		return err
	}
	return dw.Close()
}

// progressSink is a Sink that tells progress of each record written.
type progressSink struct {
	Sink
	progress    func(done, total int64)
	done, total int64
}

// Begin counts the records the store announced, then writes the header.
func (p *progressSink) Begin(counts Counts) error {
	for _, n := range counts {
		p.total += n
	}
	if err := p.Sink.Begin(counts); err != nil {
		return err
	}
	p.progress(0, p.total)
	return nil
}

// Record writes r, then tells the records written so far.
func (p *progressSink) Record(r Record) error {
	if err := p.Sink.Record(r); err != nil {
		return err
	}
	p.done++
	p.progress(p.done, p.total)
	return nil
}
