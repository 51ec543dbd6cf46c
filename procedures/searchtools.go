package procedures

import (
	"sort"
	"strings"
	"sync"
)

// Catalogue descriptions in a relevance search (docs/api.md's q covers "the
// signature's tool names and descriptions"). A procedure's search document
// holds its tools' names, never their catalogue descriptions, which change
// with the catalogue: indexing them would mean reindexing every procedure
// on each catalogue change. Instead, each search matches its words against
// the CURRENT catalogue's descriptions (SearchTools) and also looks for the
// tools found there in the documents, as tool terms: each store's analyser
// keeps a tool name as written (an identifier) as one lowercase token.
const (
	// MaxSearchTools is how many catalogue tools one search adds as tool
	// terms (each is a posting list as long as its procedures: more cost
	// more, and a weak match adds noise).
	MaxSearchTools = 4
	// SearchToolBoost is what a tool term weighs, per word of q its
	// description holds, against a word of q itself (1): a procedure found
	// only through a tool's description ranks below one holding the same
	// words in its own text, other things equal.
	SearchToolBoost = 0.5
	// maxToolTermBytes bounds a tool term (catalogue names are at most 128).
	maxToolTermBytes = 128
)

// SearchTool is a tool term of a relevance search: a catalogue tool's name,
// lowercased (the token both stores index for it), and its boost.
type SearchTool struct {
	Term  string
	Boost float64
}

// SearchTools is the one rule of catalogue descriptions in a relevance
// search: the tools of c whose description holds a word of terms (q's
// words, SearchTerms) that is distinctive in c — held by at most a quarter
// of its descriptions (at least one) — each with boost SearchToolBoost ×
// the number of such words it holds; at most MaxSearchTools, the most
// words first, then the rarest (the sum over its words of 1 / the number
// of descriptions holding it), then by name. A word held by many
// descriptions ("task", "job") says nothing about which tool is meant. Names are not matched:
// every procedure's document already holds its tools' names and their
// words (SearchParts). Nil for a nil or empty catalogue or no match.
func SearchTools(c *Catalogue, terms []string) []SearchTool {
	idx := toolIndexOf(c)
	if idx == nil || len(idx.names) == 0 {
		return nil
	}
	limit := max(1, len(idx.names)/4)
	count := map[int]int{}      // tool index → distinctive words it holds
	rarity := map[int]float64{} // tool index → Σ 1 / descriptions holding each
	for _, t := range terms {
		if ts := idx.postings[t]; len(ts) <= limit {
			for _, i := range ts {
				count[i]++
				rarity[i] += 1 / float64(len(ts))
			}
		}
	}
	if len(count) == 0 {
		return nil
	}
	hits := make([]int, 0, len(count))
	for i := range count {
		hits = append(hits, i)
	}
	sort.Slice(hits, func(a, b int) bool {
		x, y := hits[a], hits[b]
		switch {
		case count[x] != count[y]:
			return count[x] > count[y]
		case rarity[x] != rarity[y]:
			return rarity[x] > rarity[y]
		}
		return idx.names[x] < idx.names[y]
	})
	var out []SearchTool
	seen := map[string]bool{}
	for _, i := range hits {
		if len(out) == MaxSearchTools {
			break
		}
		if term := idx.names[i]; !seen[term] {
			seen[term] = true
			out = append(out, SearchTool{Term: term, Boost: SearchToolBoost * float64(count[i])})
		}
	}
	return out
}

// ValidSearchTools reports whether tools are what SearchTools returns: at
// most MaxSearchTools lowercase identifiers (letters, digits, '_') with a
// positive boost. Stores check it (fail closed) before they reach a query
// language.
func ValidSearchTools(tools []SearchTool) bool {
	if len(tools) > MaxSearchTools {
		return false
	}
	for _, t := range tools {
		if t.Term == "" || len(t.Term) > maxToolTermBytes || !(t.Boost > 0) || t.Boost > SearchToolBoost*MaxSearchTerms {
			return false
		}
		for _, r := range t.Term {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
				return false
			}
		}
	}
	return true
}

// toolIndex is a catalogue's descriptions as postings: word → the tools
// (indexes into names, ascending) whose description holds it.
type toolIndex struct {
	names    []string // lowercased tool names, catalogue order
	postings map[string][]int
}

// toolIndexes keeps the index of the last catalogue searched: stores share
// one decoded Catalogue while it is unchanged, so the pointer is the key.
var toolIndexes struct {
	mu  sync.Mutex
	cat *Catalogue
	idx *toolIndex
}

func toolIndexOf(c *Catalogue) *toolIndex {
	if c == nil {
		return nil
	}
	toolIndexes.mu.Lock()
	defer toolIndexes.mu.Unlock()
	if toolIndexes.cat == c {
		return toolIndexes.idx
	}
	idx := &toolIndex{names: make([]string, len(c.Tools)), postings: map[string][]int{}}
	for i, t := range c.Tools {
		idx.names[i] = strings.ToLower(t.Name)
		for _, w := range searchWords(t.Description, -1) {
			idx.postings[w] = append(idx.postings[w], i)
		}
	}
	toolIndexes.cat, toolIndexes.idx = c, idx
	return idx
}
