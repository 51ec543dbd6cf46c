package main

import (
	"context"

	"github.com/dustin/go-humanize"

	"github.com/procgraph/procgraph/internal/heapfloor"
)

// keepHeapFloor holds --heap-floor until Close, unless GOGC is set: an
// operator's GOGC is the pacing they chose.
func (m *Main) keepHeapFloor(ctx context.Context) {
	floor := m.Config.HeapFloor
	switch {
	case floor == 0:
		return
	case getenv(ctx, "GOGC") != "":
		m.Logger.Info().Msg("GOGC is set: --heap-floor is off")
		return
	}
	release := heapfloor.Keep(uint64(floor))
	m.onClose(func() error { release(); return nil })
	m.Logger.Debug().Str("heap_floor", humanize.IBytes(uint64(floor))).Msg("heap floor held")
}
