package signature

import (
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID):
// unlike wall time, it does not count the time other processes of a
// shared machine take the core.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// BenchmarkCanonicalAdded measures, in the thread's CPU time, Analyze and
// the canonical form alone (on the analysed trees) in every op, on each
// shared example and on the canonical corpus, and reports what the
// canonical form adds to Analyze as added-% (the bound is 10%).
// Each op times both sides over the whole set; the figures are the best
// op's, which a loaded machine disturbs least.
func BenchmarkCanonicalAdded(b *testing.B) {
	readOnly := exampleReadOnly(b)
	sets := [][]canonBlock{}
	names := []string{}
	for _, name := range sharedExamples {
		code, dialect := loadExample(b, name)
		sets, names = append(sets, []canonBlock{{name: name, code: code, dialect: dialect}}), append(names, name)
	}
	sets, names = append(sets, canonCorpus(b)), append(names, "canonical_corpus")
	for i, blocks := range sets {
		b.Run(names[i], func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			type tree struct {
				k *analysed
				a *Analysis
			}
			trees := make([]tree, len(blocks))
			for j, c := range blocks {
				k := &analysed{}
				a, err := analyze(c.code, c.dialect, false, k)
				if err != nil {
					b.Fatal(err)
				}
				trees[j] = tree{k, a}
			}
			const reps = 20 // each side runs the set reps times per op
			best := [2]time.Duration{1 << 62, 1 << 62}
			for b.Loop() {
				t0 := threadCPU()
				for range reps {
					for _, c := range blocks {
						if _, err := Analyze(c.code, c.dialect); err != nil {
							b.Fatal(err)
						}
					}
				}
				t1 := threadCPU()
				for range reps {
					for _, t := range trees {
						canonicalOf(t.k.file, t.a, readOnly)
					}
				}
				t2 := threadCPU()
				best[0], best[1] = min(best[0], t1-t0), min(best[1], t2-t1)
			}
			b.ReportMetric(float64(best[0].Nanoseconds())/reps, "analyze-cpu-ns")
			b.ReportMetric(float64(best[1].Nanoseconds())/reps, "canonical-cpu-ns")
			b.ReportMetric(100*float64(best[1])/float64(best[0]), "added-%")
		})
	}
}
