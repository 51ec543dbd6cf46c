// Package search is the one home of a relevance search's text rules,
// which both stores apply: the words of q (Terms), a procedure's search
// document (MergeParts, Document), the catalogue's tool terms (Tools), and
// the ranking of the hits (RankHits) and their page (Page). It imports
// nothing of procgraph but fault: procedures and the stores import it.
package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/findorder"
)

// Relevance search limits.
const (
	// MaxBytes is the longest q accepted (docs/api.md).
	MaxBytes = fields.MaxSearchBytes
	// MaxTerms is how many distinct words of q are searched; the
	// rest are ignored.
	MaxTerms = 32
	// MaxHits is how many procedures a store takes from its
	// full-text index, best text relevance first, before the other filters
	// and the ranking apply.
	MaxHits = 1000
	// maxTermBytes bounds one searched word; longer ones are cut.
	maxTermBytes = 64
	// MaxParts bounds the distinct texts a procedure's search
	// document keeps (procedures.SearchParts); later ones are not added.
	MaxParts = fields.MaxSearchParts
)

// Terms is the sanitiser of q, the one home of what a relevance
// search looks for: q's words (maximal runs of letters and digits),
// lowercased, distinct, in order, at most MaxTerms, each cut to 64
// bytes. Nothing else of q survives, so no query syntax of a full-text
// engine (Lucene's + - && || ! ( ) { } [ ] ^ " ~ * ? : \ /, AND, OR, NOT)
// reaches one. Returns fault.CodeInvalid (field q) for q over MaxBytes,
// not valid UTF-8, or without any word.
func Terms(q string) ([]string, error) {
	switch {
	case len(q) > MaxBytes:
		return nil, fault.Errorf(fault.CodeInvalid, "q is %d bytes, at most %d are allowed", len(q), MaxBytes).WithDetails("field", "q")
	case !utf8.ValidString(q):
		return nil, fault.Errorf(fault.CodeInvalid, "q is not valid UTF-8").WithDetails("field", "q")
	}
	terms := searchWords(q, MaxTerms)
	if len(terms) == 0 {
		return nil, fault.Errorf(fault.CodeInvalid, "q has no word to search for (letters or digits)").WithDetails("field", "q")
	}
	return terms, nil
}

// searchWords returns up to max distinct lowercased words of s.
func searchWords(s string, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		w = strings.ToLower(w)
		if len(w) > maxTermBytes {
			w = cutUTF8(w, maxTermBytes)
		}
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == max {
			break
		}
	}
	return out
}

func cutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ValidTerms reports whether terms are what Terms returns: at most
// MaxTerms non-empty lowercase words of letters and digits. Stores
// check it (fail closed) before terms reach a query language.
func ValidTerms(terms []string) bool {
	if len(terms) > MaxTerms {
		return false
	}
	for _, t := range terms {
		if t == "" || len(t) > maxTermBytes || t != strings.ToLower(t) {
			return false
		}
		for _, r := range t {
			if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
				return false
			}
		}
	}
	return true
}

// MergeParts returns old with the parts of add it lacks, in order,
// keeping at most MaxParts.
func MergeParts(old, add []string) []string {
	out := append([]string(nil), old...)
	for _, p := range add {
		if len(out) >= MaxParts {
			break
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Document is the text a store indexes for a procedure: its parts,
// one a line.
func Document(parts []string) string { return strings.Join(parts, "\n") }

// Hit is one procedure a store's full-text index matched, with its
// text relevance (the engine's score: BM25 on both stores) and what the
// ranking breaks ties with.
type Hit struct {
	Name       string
	Text       float64
	Frequency  int64
	LastUsedAt *int64 // Unix milliseconds; nil never used
	Score      float64
}

// FrequencyWeight is how much frequency counts in a search's score
// (Score; the Neo4j store's search.cypher takes it from here).
const FrequencyWeight = 0.1

// Score is the one score of a relevance search's hit: text × (1 + 0.1 ×
// ln(1 + frequency)) — text relevance first, a procedure used 10 times
// scoring 24% above one never used with the same text relevance — rounded
// to 6 decimals.
func Score(text float64, frequency int64) float64 {
	s := text * (1 + FrequencyWeight*math.Log1p(float64(max(frequency, 0))))
	return math.Round(s*1e6) / 1e6
}

// Compare is the one order of a relevance search's hits: Score desc, then
// Find's order (findorder.Compare: frequency desc, last_used_at desc with
// never used last, name asc). A page a store answers is sorted by it (the
// conformance suite checks both stores).
func Compare(a, b Hit) int {
	if a.Score != b.Score {
		return cmp.Compare(b.Score, a.Score)
	}
	return findorder.Compare(a.findKey(), b.findKey())
}

// findKey is the hit's key in Find's order.
func (h Hit) findKey() findorder.Key {
	return findorder.Key{Frequency: h.Frequency, LastUsedAt: h.LastUsedAt, Name: h.Name}
}

// RankHits ranks every hit of a store that gets its full-text engine's
// matches back (the embedded store): it sets each Score and sorts the hits
// by Compare. The Neo4j store ranks in search.cypher, with the same Score
// and order, and answers that page as it is (docs/adr/0016).
func RankHits(hits []Hit) {
	for i := range hits {
		hits[i].Score = Score(hits[i].Text, hits[i].Frequency)
	}
	slices.SortFunc(hits, Compare)
}

// Page returns the hits of the page at offset with at most limit hits (0
// no limit).
func Page(hits []Hit, offset, limit int) []Hit {
	if offset >= len(hits) {
		return nil
	}
	end := len(hits)
	if limit > 0 && offset+limit < end {
		end = offset + limit
	}
	return hits[offset:end]
}
