package dump

import (
	"context"
	"io"

	"github.com/procgraph/procgraph/internal/buildinfo"
)

// Write writes a whole dump of st to w: header, records, trailer (with
// the recordings only when opts.Recordings). Returns Dump's and the
// writer's errors.
func Write(ctx context.Context, st Store, w io.Writer, opts DumpOptions) error {
	dw := NewWriter(w, st.DumpSource(), buildinfo.Version())
	if err := st.Dump(ctx, dw, opts); err != nil {
		return err
	}
	return dw.Close()
}
