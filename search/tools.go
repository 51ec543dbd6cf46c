package search

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
// the CURRENT catalogue's descriptions (Tools) and also looks for the
// tools found there in the documents, as tool terms: each store's analyser
// keeps a tool name as written (an identifier) as one lowercase token.
const (
	// MaxTools is how many catalogue tools one search adds as tool
	// terms (each is a posting list as long as its procedures: more cost
	// more, and a weak match adds noise).
	MaxTools = 4
	// ToolBoost is what a tool term weighs, per word of q its
	// description holds, against a word of q itself (1): a procedure found
	// only through a tool's description ranks below one holding the same
	// words in its own text, other things equal.
	ToolBoost = 0.5
	// maxToolTermBytes bounds a tool term (catalogue names are at most 128).
	maxToolTermBytes = 128
)

// Tool is a tool term of a relevance search: a catalogue tool's name,
// lowercased (the token both stores index for it), and its boost.
type Tool struct {
	Term  string
	Boost float64
}

// Tools is the one rule of catalogue descriptions in a relevance
// search: the tools of c whose description holds a word of terms (q's
// words, Terms) that is distinctive in c — held by at most a quarter
// of its descriptions (at least one) — each with boost ToolBoost ×
// the number of such words it holds; at most MaxTools, the most
// words first, then the rarest (the sum over its words of 1 / the number
// of descriptions holding it), then by name. A word held by many
// descriptions ("task", "job") says nothing about which tool is meant. Names are not matched:
// every procedure's document already holds its tools' names and their
// words (procedures.SearchParts). Nil for a nil or empty catalogue or no match.
func Tools(c Catalogue, terms []string) []Tool {
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
	var out []Tool
	seen := map[string]bool{}
	for _, i := range hits {
		if len(out) == MaxTools {
			break
		}
		if term := idx.names[i]; !seen[term] {
			seen[term] = true
			out = append(out, Tool{Term: term, Boost: ToolBoost * float64(count[i])})
		}
	}
	return out
}

// ValidTools reports whether tools are what Tools returns: at
// most MaxTools lowercase identifiers (letters, digits, '_') with a
// positive boost. Stores check it (fail closed) before they reach a query
// language.
func ValidTools(tools []Tool) bool {
	if len(tools) > MaxTools {
		return false
	}
	for _, t := range tools {
		if t.Term == "" || len(t.Term) > maxToolTermBytes || !(t.Boost > 0) || t.Boost > ToolBoost*MaxTerms {
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

// Catalogue is what Tools reads of a tool catalogue (procedures.Catalogue):
// how many tools it has and each one's name and description, in order. A
// nil Catalogue, or one of no tools, matches nothing.
type Catalogue interface {
	ToolCount() int
	ToolText(i int) (name, description string)
}

// toolIndexes keeps the index of the last catalogue searched: stores share
// one decoded catalogue while it is unchanged, so the interface value (its
// pointer) is the key.
var toolIndexes struct {
	mu  sync.Mutex
	cat Catalogue
	idx *toolIndex
}

func toolIndexOf(c Catalogue) *toolIndex {
	if c == nil || c.ToolCount() == 0 {
		return nil
	}
	toolIndexes.mu.Lock()
	defer toolIndexes.mu.Unlock()
	if toolIndexes.cat == c {
		return toolIndexes.idx
	}
	n := c.ToolCount()
	idx := &toolIndex{names: make([]string, n), postings: map[string][]int{}}
	for i := range n {
		name, description := c.ToolText(i)
		idx.names[i] = strings.ToLower(name)
		for _, w := range searchWords(description, -1) {
			idx.postings[w] = append(idx.postings[w], i)
		}
	}
	toolIndexes.cat, toolIndexes.idx = c, idx
	return idx
}
