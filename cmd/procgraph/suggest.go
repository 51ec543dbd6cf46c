package main

// "Did you mean": the closest known name to a mistyped one, for commands,
// flags and tool names.

import (
	"flag"
	"strings"

	"github.com/agnivade/levenshtein"
)

// closest is the candidate nearest to word by edit distance, "" when none
// is near enough to be what was meant: within a third of word's length
// (at least 1, at most 3 edits), or word being a prefix of it. Ties go to
// the first candidate.
func closest(word string, candidates []string) string {
	best, bestD := "", 0
	limit := min(max(1, len([]rune(word))/3), 3)
	for _, c := range candidates {
		if c == word {
			continue
		}
		d := levenshtein.ComputeDistance(word, c)
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	if best == "" && len(word) >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(c, word) {
				return c
			}
		}
	}
	return best
}

// didYouMean is "; did you mean X?" for the candidate closest to word, or
// "" when none is close.
func didYouMean(word string, candidates []string, format func(string) string) string {
	c := closest(word, candidates)
	if c == "" {
		return ""
	}
	if format != nil {
		c = format(c)
	}
	return "; did you mean " + c + "?"
}

// commandNames is every command's name ("procedures list").
func commandNames() []string {
	var out []string
	for _, g := range commands() {
		for _, c := range g.commands {
			out = append(out, c.name)
		}
	}
	return out
}

// flagSuggestion is the "did you mean" for a flag parse error of fs
// ("flag provided but not defined: -lmit"), or "".
func flagSuggestion(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return didYouMean(name, names, func(s string) string { return "--" + s })
}
