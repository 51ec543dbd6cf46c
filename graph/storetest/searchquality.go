package storetest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// The labelled set of the relevance search: PanDA-style incident families
// (a cause, its description, trigger signals, a summary and the tools its
// procedures compose) and symptom queries, each labelled with its family.
// SearchCorpus makes SearchVariants procedures of each family (its tools,
// then its tools and one of the extra tools; summaries reworded), so a
// query's relevant procedures are its family's.
//
//go:embed testdata/search_labelled.json
var labelledJSON []byte

// SearchVariants is the number of procedures SearchCorpus makes per family.
const SearchVariants = 6

type labelled struct {
	Families []struct {
		ID          string   `json:"id"`
		Cause       string   `json:"cause"`
		Description string   `json:"description"`
		Signals     []string `json:"signals"`
		Summary     string   `json:"summary"`
		Tools       []string `json:"tools"`
	} `json:"families"`
	ExtraTools []string `json:"extra_tools"`
	Verbs      []string `json:"variant_verbs"`
	// ToolDescriptions is the catalogue of the corpus: a description for
	// every tool its procedures compose (SearchCatalogue).
	ToolDescriptions map[string]string `json:"tool_descriptions"`
	Queries          []struct {
		Q               string `json:"q"`
		Family          string `json:"family"`
		ToolDescription bool   `json:"tool_description"`
	} `json:"queries"`
}

// LabelledQuery is one query of the labelled set with its relevant
// procedures. ToolDescription marks a query whose telling words are only
// in the catalogue descriptions of its family's tools.
type LabelledQuery struct {
	Q               string
	Relevant        []string
	ToolDescription bool
}

// SearchCatalogue returns the catalogue of the labelled corpus: its tools,
// read-only, with their descriptions.
func SearchCatalogue(tb testing.TB) *procedures.Catalogue {
	tb.Helper()
	var l labelled
	if err := json.Unmarshal(labelledJSON, &l); err != nil {
		tb.Fatalf("labelled set: %v", err)
	}
	tools := make([]procedures.Tool, 0, len(l.ToolDescriptions))
	for name, d := range l.ToolDescriptions {
		tools = append(tools, procedures.Tool{Name: name, Description: d, ReadOnly: true})
	}
	return mustCatalogue(tb, tools)
}

// SearchCorpus returns the captures of the labelled corpus (families ×
// SearchVariants, some captured more than once: frequencies 1 to 3) and the
// labelled queries.
func SearchCorpus(tb testing.TB) ([]procedures.CaptureInput, []LabelledQuery) {
	tb.Helper()
	var l labelled
	if err := json.Unmarshal(labelledJSON, &l); err != nil {
		tb.Fatalf("labelled set: %v", err)
	}
	var ins []procedures.CaptureInput
	byFamily := map[string][]string{}
	for fi, f := range l.Families {
		for v := 0; v < SearchVariants; v++ {
			sig := append([]string(nil), f.Tools...)
			summary := f.Summary
			if v > 0 {
				sig = append(sig, l.ExtraTools[(v-1)%len(l.ExtraTools)])
				summary = l.Verbs[(v-1)%len(l.Verbs)] + ": " + strings.ToLower(f.Summary[:1]) + f.Summary[1:]
			}
			sig = sortedUnique(sig)
			in := In(sig, fmt.Sprintf("q%02d%d", fi, v), fmt.Sprintf("q%02d%d", fi, v), At(fi*SearchVariants+v))
			in.Version.Summary = summary
			in = WithCause(in, f.Cause, f.Description)
			if v%2 == 0 && len(f.Signals) > 0 {
				sigs := make([]any, len(f.Signals))
				for i, s := range f.Signals {
					sigs[i] = s
				}
				in.Version.Metadata = map[string]any{"trigger_signals": sigs}
			}
			byFamily[f.ID] = append(byFamily[f.ID], in.Name)
			ins = append(ins, in)
			for u := 0; u < v%3; u++ {
				again := in
				again.UsageKey = fmt.Sprintf("%s-%d", in.UsageKey, u)
				ins = append(ins, again)
			}
		}
	}
	qs := make([]LabelledQuery, len(l.Queries))
	for i, q := range l.Queries {
		qs[i] = LabelledQuery{Q: q.Q, Relevant: byFamily[q.Family], ToolDescription: q.ToolDescription}
	}
	return ins, qs
}

func sortedUnique(ss []string) []string {
	m := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !m[s] {
			m[s] = true
			out = append(out, s)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// SearchQuality is recall@k and MRR of a store over the labelled queries:
// recall@k of a query is |relevant ∩ top k| / min(|relevant|, k) (1 when
// the top k are all relevant), MRR the mean of 1/rank of the first
// relevant result (0 when none is in the first page of 25).
func SearchQuality(tb testing.TB, s procedures.Store, qs []LabelledQuery, k int) (recall, mrr float64) {
	tb.Helper()
	for _, q := range qs {
		terms, err := search.Terms(q.Q)
		if err != nil {
			tb.Fatalf("query %q: %v", q.Q, err)
		}
		page, _, err := s.Find(context.Background(), procedures.Query{Search: terms, Limit: 25, SkipTotal: true})
		if err != nil {
			tb.Fatalf("query %q: %v", q.Q, err)
		}
		rel := map[string]bool{}
		for _, r := range q.Relevant {
			rel[r] = true
		}
		hit := 0
		first := 0
		for i, p := range page {
			if rel[p.Name] {
				if i < k {
					hit++
				}
				if first == 0 {
					first = i + 1
				}
			}
		}
		recall += float64(hit) / float64(min(len(q.Relevant), k))
		if first > 0 {
			mrr += 1 / float64(first)
		}
	}
	n := float64(len(qs))
	return recall / n, mrr / n
}

// MustCaptureAll captures ins: in batches when the store has CaptureBatch
// (the embedded store), else one by one.
func MustCaptureAll(tb testing.TB, s procedures.Store, ins []procedures.CaptureInput) {
	tb.Helper()
	type batcher interface {
		CaptureBatch(ctx context.Context, ins []procedures.CaptureInput) error
	}
	if b, ok := s.(batcher); ok {
		for i := 0; i < len(ins); i += 1000 {
			if err := b.CaptureBatch(context.Background(), ins[i:min(i+1000, len(ins))]); err != nil {
				tb.Fatalf("capture batch: %v", err)
			}
		}
		return
	}
	for _, in := range ins {
		MustCapture(tb, s, in)
	}
}

// BenchSearchQuality loads the labelled corpus and its catalogue into s and
// reports recall@5 and MRR over every query, recall@5 over the queries
// found through tool descriptions only (recall@5-desc) and over the others
// (recall@5-text) (ReportMetric), and the time of one labelled query.
func BenchSearchQuality(b *testing.B, s procedures.Store) {
	ins, qs := SearchCorpus(b)
	MustPutCatalogue(b, s, SearchCatalogue(b))
	MustCaptureAll(b, s, ins)
	recall, mrr := SearchQuality(b, s, qs, 5)
	var desc, text []LabelledQuery
	for _, q := range qs {
		if q.ToolDescription {
			desc = append(desc, q)
		} else {
			text = append(text, q)
		}
	}
	recallDesc, _ := SearchQuality(b, s, desc, 5)
	recallText, _ := SearchQuality(b, s, text, 5)
	terms := make([][]string, len(qs))
	for i, q := range qs {
		terms[i], _ = search.Terms(q.Q)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.Find(context.Background(), procedures.Query{Search: terms[i%len(terms)], Limit: 25, SkipTotal: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(recall, "recall@5")
	b.ReportMetric(recallDesc, "recall@5-desc")
	b.ReportMetric(recallText, "recall@5-text")
	b.ReportMetric(mrr, "MRR")
	b.ReportMetric(float64(len(qs)), "queries")
}

// ScaleCorpus returns n captures of distinct procedures made from the
// labelled families (each with a numbered tool of its own), for
// BenchSearchScale.
func ScaleCorpus(tb testing.TB, n int) []procedures.CaptureInput {
	tb.Helper()
	var l labelled
	if err := json.Unmarshal(labelledJSON, &l); err != nil {
		tb.Fatalf("labelled set: %v", err)
	}
	rng := rand.New(rand.NewSource(1))
	ins := make([]procedures.CaptureInput, n)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range ins {
		f := l.Families[rng.Intn(len(l.Families))]
		sig := sortedUnique(append(append([]string(nil), f.Tools...), fmt.Sprintf("tool_%06d", i)))
		in := In(sig, fmt.Sprintf("s%06d", i), fmt.Sprintf("s%06d", i), at.Add(time.Duration(i)*time.Millisecond))
		in.Version.Summary = l.Verbs[rng.Intn(len(l.Verbs))] + ": " + f.Summary
		in = WithCause(in, f.Cause, f.Description)
		ins[i] = in
	}
	return ins
}

// FillScale fills the empty store to with ScaleCorpus(n) and the labelled
// catalogue through the dump path: captured in batches into a temporary
// embedded store (from), exported to a file in dir and imported into to
// (dump.Import, batches of 5000 records) — the fast way to fill a
// Neo4j store; Capture takes minutes per 10k there.
func FillScale(tb testing.TB, from, to procedures.Store, dir string, n int) {
	tb.Helper()
	MustPutCatalogue(tb, from, SearchCatalogue(tb))
	MustCaptureAll(tb, from, ScaleCorpus(tb, n))
	path, err := ExportFile(from, dir, "scale")
	if err != nil {
		tb.Fatalf("export: %v", err)
	}
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	if _, err := dump.Import(context.Background(), to.(dump.Store), open, dump.ImportOptions{BatchSize: 5000}); err != nil {
		tb.Fatalf("import: %v", err)
	}
}

// ScaleFilled reports whether s holds exactly what FillScale(n) puts in
// it: n procedures, the first and last of ScaleCorpus(n) among them, and
// the labelled catalogue (so a kept Neo4j fill is reused, not redone).
func ScaleFilled(tb testing.TB, s procedures.Store, n int) bool {
	tb.Helper()
	ctx := context.Background()
	ins := ScaleCorpus(tb, n)
	got, err := s.GetMany(ctx, []string{ins[0].Name, ins[n-1].Name})
	if err != nil || len(got) != 2 {
		return false
	}
	_, total, err := s.Find(ctx, procedures.Query{Limit: 1})
	if err != nil || total != n {
		return false
	}
	cat, err := s.Catalogue(ctx)
	return err == nil && cat.Revision == SearchCatalogue(tb).Revision
}

// BenchSearchScale reports the time of a labelled query on s, which holds
// procedures from ScaleCorpus (loaded by the caller: loading is slow).
func BenchSearchScale(b *testing.B, s procedures.Store) {
	_, qs := SearchCorpus(b)
	terms := make([][]string, len(qs))
	for i, q := range qs {
		terms[i], _ = search.Terms(q.Q)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.Find(context.Background(), procedures.Query{Search: terms[i%len(terms)], Limit: 25}); err != nil {
			b.Fatal(err)
		}
	}
}
