package main

// "Did you mean": the closest known name to a mistyped one, for commands,
// flags and tool names.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/procgraph/procgraph/fault"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
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

// procedureHint is the "did you mean" for a procedure name the server does
// not know (a not_found answer): the nearest of the names it lists, as the
// error's suggestion. Other errors, and a name near none, are returned as
// they are.
func procedureHint(ctx context.Context, c *client, name string, err error) error {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Code != string(fault.CodeNotFound) || ae.Hint != "" {
		return err
	}
	var out struct {
		Procedures []struct {
			Name string `json:"name"`
		} `json:"procedures"`
	}
	if _, lerr := c.do(ctx, "GET", "/v1/procedures", url.Values{"limit": {strconv.Itoa(procedures.MaxFindLimit)}}, nil, &out); lerr != nil {
		return err
	}
	names := make([]string, len(out.Procedures))
	for i, p := range out.Procedures {
		names[i] = p.Name
	}
	if hint := closest(name, names); hint != "" {
		ae.Hint = "did you mean " + hint + "?"
	}
	return err
}

// warnUnknownTools tells, on w, which of tools the server's catalogue does
// not hold, each with the nearest tool it does ("no tool kil_job in the
// catalogue; did you mean kill_job?").
func warnUnknownTools(ctx context.Context, c *client, w io.Writer, tools []string) {
	if len(tools) == 0 {
		return
	}
	var cat catalogueAnswer
	if _, err := c.do(ctx, "GET", "/v1/tools", nil, nil, &cat); err != nil {
		return
	}
	known := map[string]bool{}
	names := make([]string, len(cat.Tools))
	for i, t := range cat.Tools {
		known[t.Name], names[i] = true, t.Name
	}
	for _, t := range tools {
		if !known[t] {
			fmt.Fprintf(w, "procgraph: no tool %s in the catalogue%s\n", ptext.VisibleLine(strconv.Quote(t)), didYouMean(t, names, nil))
		}
	}
}
