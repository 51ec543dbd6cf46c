package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"

	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
)

// printLifted prints what a capture lifted into parameters and why
// literals that could have been were not, each line visibly (the example
// and the names come from the code an agent wrote).
func printLifted(w io.Writer, lifted []procedures.Lifted, warnings []procedures.Warning) {
	for _, l := range lifted {
		fmt.Fprintf(w, "lifted: %s\n", ptext.VisibleLine(fmt.Sprintf("line %d, column %d: tools.%s(%s=…) -> parameter %s (example %s)",
			l.Line, l.Column, l.Tool, l.Argument, l.Parameter, compactJSON(l.Example))))
	}
	for _, m := range warnings {
		fmt.Fprintf(w, "warning: %s\n", ptext.VisibleLine(m.Message))
	}
}

// liftPreview is one procedure's entry of `lift --dry-run --json`.
type liftPreview struct {
	Procedure string               `json:"procedure"`
	CodeHash  string               `json:"code_hash"`
	Lifted    []procedures.Lifted  `json:"lifted"`
	Warnings  []procedures.Warning `json:"warnings"`
}

// cmdLift is `procgraph lift --dry-run`: for every procedure's current
// version, what capturing its code again would lift under the current
// catalogue. Stored versions are never rewritten: a re-capture makes the
// lifted version, which an operator promotes if they want it current.
func cmdLift(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("lift", "lift --dry-run [--json]", "What a re-capture of each procedure's current version would lift into parameters (stored versions are never rewritten).", true)
	dry := cl.fs.Bool("dry-run", false, "list what would be lifted (required: nothing is ever rewritten)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	if !*dry {
		fmt.Fprintln(s.err, "procgraph lift: only --dry-run exists: stored versions are never rewritten (capture the code again to store its lifted version)")
		return 2
	}
	c := newClient(ctx)
	var cat catalogueAnswer
	if _, err := c.do(ctx, "GET", "/v1/tools", nil, nil, &cat); err != nil {
		return failAnswer(cl, s, err)
	}
	catalogue, err := procedures.NewCatalogue(cat.Tools)
	if err != nil {
		return fail(s.err, "lift", err)
	}
	var previews []liftPreview
	total, folded := 0, 0
	for offset := 0; ; {
		var page struct {
			Procedures []procedures.Procedure `json:"procedures"`
			Total      int                    `json:"total"`
		}
		q := url.Values{"limit": {"500"}, "offset": {strconv.Itoa(offset)}}
		if _, err := c.do(ctx, "GET", "/v1/procedures", q, nil, &page); err != nil {
			return failAnswer(cl, s, err)
		}
		for _, p := range page.Procedures {
			total++
			r, err := procedures.LiftPreview(p.Code, p.Dialect, catalogue)
			if err != nil || len(r.Lifted) == 0 && len(r.Warnings) == 0 {
				continue
			}
			pv := liftPreview{Procedure: p.Name, CodeHash: p.CodeHash, Lifted: r.Lifted, Warnings: []procedures.Warning{}}
			for _, w := range r.Warnings {
				pv.Warnings = append(pv.Warnings, procedures.Warning{Line: w.Line, Column: w.Column, Message: w.Message})
			}
			if len(r.Lifted) > 0 {
				folded++
			}
			previews = append(previews, pv)
		}
		offset += len(page.Procedures)
		if len(page.Procedures) == 0 || offset >= page.Total {
			break
		}
	}
	if cl.asJSON() {
		if previews == nil {
			previews = []liftPreview{}
		}
		b, _ := json.Marshal(map[string]any{"procedures": previews, "total": total, "would_lift": folded})
		printRawJSON(s.out, b)
		return 0
	}
	for _, pv := range previews {
		fmt.Fprintf(s.out, "%s (%s)\n", pv.Procedure, pv.CodeHash)
		printLifted(s.out, pv.Lifted, pv.Warnings)
	}
	fmt.Fprintf(s.out, "%d of %d procedures would lift a literal on a re-capture; nothing was changed\n", folded, total)
	return 0
}
