package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"

	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/replay"
)

// verifyPage is how many procedures verify --all reads at once.
const verifyPage = 200

// cmdVerify verifies versions against their recordings (POST
// /v1/procedures/{name}/verify): one procedure, or every one with --all.
// It exits 1 when a recording does not pass, so a team can run it in the
// CI of a tool server.
func cmdVerify(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("verify", "verify NAME [--version CODE_HASH] [--json] | verify --all [--json]",
		"Replay versions in the sandbox against their recordings, calling no tool: each call must be the recorded one and satisfy the tool's current input schema, and the result must be the recorded one. Exits 1 when a recording does not pass. Needs the invoke scope.", true)
	version := cl.fs.String("version", "", "the version's code hash (default: the current one)")
	all := cl.fs.Bool("all", false, "verify the current version of every procedure")
	maxPos := 1
	if len(args) > 0 && (args[0] == "--all" || args[0] == "-all") {
		maxPos = 0
	}
	pos, code, done := cl.parse(args, 0, maxPos, s)
	if done {
		return code
	}
	if *all == (len(pos) == 1) || (*all && *version != "") {
		fmt.Fprintln(s.err, "procgraph verify: name one procedure, or --all (without --version)")
		return 2
	}
	c := newClient(ctx)
	names := pos
	if *all {
		var err error
		if names, err = allProcedureNames(ctx, c); err != nil {
			return fail(s.err, "verify", err)
		}
	}
	var answers []*replay.VerifyAnswer
	failed := false
	for _, name := range names {
		body := map[string]any{}
		if *version != "" {
			body["version"] = *version
		}
		var ans replay.VerifyAnswer
		if _, err := c.do(ctx, "POST", "/v1/procedures/"+pathSegment(name)+"/verify", nil, body, &ans); err != nil {
			return failAnswer(cl, s, err)
		}
		failed = failed || ans.Verification.Status == "failed"
		answers = append(answers, &ans)
	}
	if cl.asJSON() {
		if !*all {
			printJSON(s.out, answers[0])
		} else {
			printJSON(s.out, map[string]any{"verifications": answers})
		}
	} else {
		printVerifications(s.out, answers)
	}
	if failed {
		return 1
	}
	return 0
}

// allProcedureNames reads every procedure's name, page by page.
func allProcedureNames(ctx context.Context, c *client) ([]string, error) {
	var names []string
	for offset := 0; ; offset += verifyPage {
		var page struct {
			Procedures []struct{ Name string }
			Total      int
		}
		q := url.Values{"limit": {strconv.Itoa(verifyPage)}, "offset": {strconv.Itoa(offset)}}
		if _, err := c.do(ctx, "GET", "/v1/procedures", q, nil, &page); err != nil {
			return nil, err
		}
		for _, p := range page.Procedures {
			names = append(names, p.Name)
		}
		if len(page.Procedures) < verifyPage || offset+verifyPage >= page.Total {
			return names, nil
		}
	}
}

// printVerifications prints one line per verification and one per
// recording that did not pass.
func printVerifications(w io.Writer, answers []*replay.VerifyAnswer) {
	passed, failed, none := 0, 0, 0
	for _, a := range answers {
		v := a.Verification
		fmt.Fprintf(w, "%s %s: %s", ptext.Visible(a.Procedure), shortHash(a.CodeHash), ptext.Visible(v.Status))
		if v.Recordings > 0 {
			fmt.Fprintf(w, " (%d of %d recordings)", v.Passed, v.Recordings)
		}
		fmt.Fprintln(w)
		for _, r := range a.Results {
			if r.Outcome == replay.VerifyPassed {
				continue
			}
			at := ""
			if r.Call != nil {
				at = fmt.Sprintf(" at call %d", *r.Call)
			}
			fmt.Fprintf(w, "  %s: %s%s: %s\n", ptext.Visible(r.Recording), ptext.Visible(r.Outcome), at, ptext.Visible(r.Detail))
		}
		switch v.Status {
		case "passed":
			passed++
		case "failed":
			failed++
		default:
			none++
		}
	}
	if len(answers) > 1 {
		fmt.Fprintf(w, "%d passed, %d failed, %d without recordings\n", passed, failed, none)
	}
}
