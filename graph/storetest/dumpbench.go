package storetest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/procedures"
)

// PeakHeap runs fn and returns how far the Go heap rose above its level
// before (after a GC), at its highest (sampled every 10 ms), and fn's
// duration.
func PeakHeap(fn func() error) (rise uint64, took time.Duration, err error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := base
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				mu.Lock()
				peak = max(peak, m.HeapAlloc)
				mu.Unlock()
			}
		}
	})
	start := time.Now()
	err = fn()
	took = time.Since(start)
	close(done)
	wg.Wait()
	return peak - base, took, err
}

// ExportFile exports s to a new file in dir and returns its path.
func ExportFile(s procedures.Store, dir, source string) (string, error) {
	path := filepath.Join(dir, source+".pgdump")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := dump.NewWriter(f, source, "bench")
	if err := s.(dump.Store).Dump(context.Background(), w, dump.DumpOptions{}); err != nil {
		f.Close()
		return "", err
	}
	if err := w.Close(); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// ImportFile imports the dump at path into s.
func ImportFile(s procedures.Store, path string) (dump.ImportSummary, error) {
	return ImportFileWith(context.Background(), s, path, dump.ImportOptions{})
}

// ImportFileWith imports the dump at path into s with opts.
func ImportFileWith(ctx context.Context, s procedures.Store, path string, opts dump.ImportOptions) (dump.ImportSummary, error) {
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	return dump.Import(ctx, s.(dump.Store), open, opts)
}

// BenchExportImport fills from to n procedures (Fill), then measures once:
// its export to a file, the import of that file into to, and the export of
// to; each reports seconds, the peak Go heap (MiB) and the dump's size.
func BenchExportImport(b *testing.B, from, to procedures.Store, n int) {
	BenchExportImportWith(context.Background(), b, from, to, n, dump.ImportOptions{})
}

// BenchExportImportWith is BenchExportImport importing with ctx and opts.
func BenchExportImportWith(ctx context.Context, b *testing.B, from, to procedures.Store, n int, opts dump.ImportOptions) {
	start := time.Now()
	Fill(b, from, n)
	b.Logf("fill to %d procedures: %v", n, time.Since(start).Round(time.Millisecond))
	dir := b.TempDir()
	var path string
	report := func(name string, fn func() error) {
		peak, took, err := PeakHeap(fn)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		fi, _ := os.Stat(path)
		b.Logf("%s of %d procedures: %v, heap rise %.1f MiB, dump %.1f MiB", name, n, took.Round(time.Millisecond),
			float64(peak)/(1<<20), float64(fi.Size())/(1<<20))
		b.ReportMetric(took.Seconds(), name+"_s")
		b.ReportMetric(float64(peak)/(1<<20), name+"_heap_rise_MiB")
	}
	for b.Loop() {
		report("export", func() (err error) { path, err = ExportFile(from, dir, "from"); return err })
		report("import", func() error { _, err := ImportFileWith(ctx, to, path, opts); return err })
		report("export_again", func() (err error) { _, err = ExportFile(to, dir, "to"); return err })
	}
}
