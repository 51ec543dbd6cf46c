package signature

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// exampleReadOnly is the examples catalogue's classification
// (examples/catalogue.json): its read-only tools.
func exampleReadOnly(b *testing.B) func(string) bool {
	data, err := os.ReadFile(filepath.Join("..", "examples", "catalogue.json"))
	if err != nil {
		b.Fatal(err)
	}
	var cat struct {
		Tools []struct {
			Name     string `json:"name"`
			ReadOnly bool   `json:"read_only"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &cat); err != nil {
		b.Fatal(err)
	}
	ro := map[string]bool{}
	for _, t := range cat.Tools {
		ro[t.Name] = t.ReadOnly
	}
	return func(tool string) bool { return ro[tool] || testReadOnly(tool) }
}

// BenchmarkCanonical measures Analyze and AnalyzeCanonical side by side:
// on each shared example (examples/procedures, copied into the corpus) and
// on the whole canonical corpus (every block of
// testdata/canonical/pairs.txtar, one op analysing them all). The
// canonical form's cost is AnalyzeCanonical's time over Analyze's.
func BenchmarkCanonical(b *testing.B) {
	readOnly := exampleReadOnly(b)
	type set struct {
		name   string
		blocks []canonBlock
	}
	var sets []set
	for _, name := range sharedExamples {
		code, dialect := loadExample(b, name)
		sets = append(sets, set{name, []canonBlock{{name: name, code: code, dialect: dialect}}})
	}
	sets = append(sets, set{"canonical_corpus", canonCorpus(b)})
	for _, s := range sets {
		b.Run(s.name+"/Analyze", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, c := range s.blocks {
					if _, err := Analyze(c.code, c.dialect); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		// The canonical form alone, on the analysed trees: what
		// AnalyzeCanonical adds to Analyze, measured apart from the
		// analysis' own noise.
		b.Run(s.name+"/CanonicalOnly", func(b *testing.B) {
			type tree struct {
				k *analysed
				a *Analysis
			}
			trees := make([]tree, len(s.blocks))
			for i, c := range s.blocks {
				k := &analysed{}
				a, err := analyze(c.code, c.dialect, false, k)
				if err != nil {
					b.Fatal(err)
				}
				trees[i] = tree{k, a}
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, t := range trees {
					canonicalOf(t.k.file, t.a, readOnly)
				}
			}
		})
		b.Run(s.name+"/AnalyzeCanonical", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, c := range s.blocks {
					if _, _, err := AnalyzeCanonical(c.code, c.dialect, readOnly); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
