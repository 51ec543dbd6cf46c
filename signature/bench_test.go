package signature

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/internal/blocksyntax"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
)

// sharedExamples are the four example procedures of the design, copied into
// the corpus.
var sharedExamples = []string{"compare_logs.star", "retry_after_check.star", "scouts_and_inputs.py", "causes_for_symptom.py"}

func loadExample(b *testing.B, name string) (string, Dialect) {
	path := filepath.Join("testdata", "corpus", name)
	code, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(code), dialectOf(path)
}

// BenchmarkAnalyze measures Analyze per procedure on the shared examples.
func BenchmarkAnalyze(b *testing.B) {
	for _, name := range sharedExamples {
		code, dialect := loadExample(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(code, dialect); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAnalyzeVsCPython runs Analyze on each shared example and, in the
// same run, Bamboo's approach in CPython (bench/python_signature.py:
// ast.parse + ast.walk), reported as the cpython-ns/op metric next to Go's
// ns/op, with their ratio as x-faster.
func BenchmarkAnalyzeVsCPython(b *testing.B) {
	python, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 not found")
	}
	script := filepath.Join("..", "bench", "python_signature.py")
	for _, name := range sharedExamples {
		code, dialect := loadExample(b, name)
		a, err := Analyze(code, dialect)
		if err != nil {
			b.Fatal(err)
		}
		out, err := exec.Command(python, script, filepath.Join("testdata", "corpus", name), "3000").Output()
		if err != nil {
			b.Fatalf("%s: %v", script, err)
		}
		// Output: "sig1,sig2 12345.6 ns/op"
		fields := strings.Fields(string(out))
		if len(fields) != 3 || fields[0] != strings.Join(a.Signature, ",") {
			b.Fatalf("python output %q, Go signature %q", out, a.Signature)
		}
		pyNs, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(code, dialect); err != nil {
					b.Fatal(err)
				}
			}
			goNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(pyNs, "cpython-ns/op")
			b.ReportMetric(pyNs/goNs, "x-faster")
		})
	}
}

// BenchmarkParseResolve measures only blocksyntax.Parse and resolve.File, the part
// of Analyze spent in go.starlark.net: the floor under BenchmarkAnalyze.
func BenchmarkParseResolve(b *testing.B) {
	for _, name := range sharedExamples {
		code, dialect := loadExample(b, name)
		a, err := Analyze(code, dialect)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := blocksyntax.Parse("procedure", a.Source)
				if err != nil {
					b.Fatal(err)
				}
				if err := resolve.File(f, func(string) bool { return true }, starlark.Universe.Has); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
