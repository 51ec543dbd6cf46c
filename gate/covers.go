package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// Cover is what one answer to an approval covers (docs/design.md "What
// an answer covers"): shown to the operator, on every surface, before
// they answer.
type Cover struct {
	Choice Choice `json:"choice"`
	// Text says what the answer runs and what it remembers (CoversText).
	Text string `json:"text"`
	// Grants names the procedures the answer grants durable auto-run to:
	// for every caller and any arguments, until revoked. The console and
	// the CLI make the operator confirm them.
	Grants []string `json:"grants"`
	// IfEdited (auto_run only) is what the answer covers when the operator
	// replaces the block: what it grants depends on the edited code, so
	// the console asks for a confirmation that says this.
	IfEdited string `json:"if_edited,omitempty"`
}

// CoverScope is what an answer to one approval may cover: the block's
// shape (every signature entry a proc__ or not), the procedures it calls
// directly with the tools each changes state through, the names of its
// arguments, and whose session it is.
type CoverScope struct {
	// ProcOnly: every signature entry is a proc__ (auto_run grants them).
	ProcOnly bool
	// Procs are the proc__ the block calls directly, sorted.
	Procs []string
	// StateChanging are the state-changing tools of each of Procs, by name.
	StateChanging map[string][]string
	// Arguments are the names of the block's arguments, sorted.
	Arguments []string
	// ReadOnly: the block changes no state (a policy on it covers any
	// argument values).
	ReadOnly bool
	// SingleRead is the procedure of a block that is one read-only
	// tool's call ("" otherwise): auto_run grants it (grantSingleRead).
	SingleRead string
	SessionID  string
	Requester  string
	// Edited: the operator replaces the block with code of their own,
	// whose shape the scope does not know.
	Edited bool
	// Call is the call the turn is paused at (review at the call; nil
	// otherwise): the answers are given at it, and run_all is one.
	Call *TurnCall
}

// Covers is the cover of every choice of s, in Choices' order: at a call
// (s.Call) every choice, else BlockChoices.
func Covers(s CoverScope) []Cover {
	choices := BlockChoices
	if s.Call != nil {
		choices = Choices
	}
	out := make([]Cover, 0, len(choices))
	for _, c := range choices {
		cv := Cover{Choice: c, Text: CoversText(c, s), Grants: []string{}}
		if c == ChoiceAutoRun && s.ProcOnly {
			cv.Grants = append(cv.Grants, s.Procs...)
		}
		if c == ChoiceAutoRun && s.SingleRead != "" {
			cv.Grants = append(cv.Grants, s.SingleRead)
		}
		if c == ChoiceAutoRun {
			e := s
			e.Edited = true
			cv.IfEdited = CoversText(c, e)
		}
		out = append(out, cv)
	}
	return out
}

// CoversText is what answering choice c covers for an approval of scope
// s, in words: the one home of that wording (the HTTP review, the CLI, the
// console and the MCP review all show it), so that a change of what an
// answer covers changes it here.
func CoversText(c Choice, s CoverScope) string {
	if s.Call != nil && !s.Edited {
		return atCallText(c, s)
	}
	switch c {
	case ChoiceRunOnce:
		return "run_once runs this block once, as shown, with these arguments; nothing is remembered"
	case ChoiceAutoRun:
		if s.Edited {
			return fmt.Sprintf("auto_run runs the edited block now; if it calls only proc__ tools, it grants auto-run of each "+
				"for every caller and any arguments, until revoked; otherwise auto-run covers that program in any text "+
				"(read-only: with any values; state-changing: with the argument values shown), "+
				"in this session (%s), for turns of %s, until revoked", s.SessionID, s.Requester)
		}
		if s.ProcOnly && len(s.Procs) == 0 {
			return "auto_run runs this block now; it calls no tools, so nothing is remembered"
		}
		if s.ProcOnly {
			grants := make([]string, 0, len(s.Procs))
			for _, p := range s.Procs {
				g := "auto-run of " + p + " for every caller and any arguments, until revoked"
				if sc := s.StateChanging[p]; len(sc) > 0 {
					g += " (it changes state through " + strings.Join(sc, ", ") + ")"
				}
				grants = append(grants, g)
			}
			return "auto_run runs this block now and grants " + strings.Join(grants, "; ") +
				"; each grant holds only while the procedure's current version is the one shown"
		}
		if s.SingleRead != "" {
			return fmt.Sprintf("auto_run runs this block now and, once it succeeded, grants auto-run of %s (this read) for every caller "+
				"and any arguments, until revoked: the same program in any text runs unreviewed in every session", s.SingleRead)
		}
		// docs/design.md "What an authorization binds to": a policy covers
		// the canonical program, read-only with any values, state-changing
		// with the values shown.
		with := "in any text, with the argument values shown only"
		if s.ReadOnly {
			with = "in any text, with any values of its arguments and literals"
			if len(s.Arguments) > 0 {
				with = "in any text, with any " + strings.Join(s.Arguments, ", ") + " and any values of its literals"
			}
		}
		return fmt.Sprintf("auto_run runs this block now; auto-run covers this program, %s, in this session (%s), for turns of %s, until revoked", with, s.SessionID, s.Requester)
	case ChoiceAlwaysAsk:
		return "always_ask runs this block once and records that this program is reviewed every time in this session"
	case ChoiceReject:
		return "reject does not run this block; nothing is remembered"
	}
	return ""
}

// atCallText is CoversText at the call s.Call: each answer is given at
// that call, after its reads ran.
func atCallText(c Choice, s CoverScope) string {
	call := fmt.Sprintf("this call (tools.%s", s.Call.Tool)
	if s.Call.Line > 0 {
		call += fmt.Sprintf(", line %d", s.Call.Line)
	}
	call += ", with the arguments shown)"
	switch c {
	case ChoiceRunOnce:
		return "run_once runs " + call + " once; the run then goes on under the read-only allow-set and asks again at its next " +
			"state-changing call, if any; nothing is remembered"
	case ChoiceRunAll:
		return "run_all runs " + call + " and every later state-changing call of this run without asking again (the whole block's review, " +
			"given at its first call); nothing is remembered"
	case ChoiceAutoRun:
		b := s
		b.Call = nil
		return CoversText(ChoiceAutoRun, b) + "; at this call: it runs " + call + " and the rest of the run without asking again"
	case ChoiceAlwaysAsk:
		return "always_ask runs " + call + " once and records that this program is reviewed every time in this session; " +
			"the next state-changing call of the run is asked again"
	case ChoiceReject:
		return "reject ends the run: " + call + " is not made and nothing after it runs; nothing is remembered"
	}
	return ""
}

// coverScope is the CoverScope of stored turn r: its signature (ProcOnly
// as procOnlyOf has it, which decides what auto_run remembers), the
// state-changing tools of its procedures as its binding recorded them, and
// the names of its arguments.
func coverScope(r *TurnRecord) CoverScope {
	s := CoverScope{ProcOnly: true, Procs: []string{}, StateChanging: map[string][]string{}, Arguments: []string{},
		SessionID: r.SessionID, Requester: r.RequestedBy, ReadOnly: r.ReadOnly, Call: r.Call}
	for _, n := range r.Signature {
		if !procedures.IsProcName(n) {
			s.ProcOnly = false
			continue
		}
		s.Procs = append(s.Procs, n)
	}
	if r.Binding != nil {
		for _, n := range r.Binding.Nested {
			if slices.Contains(s.Procs, n.Name) {
				s.StateChanging[n.Name] = n.StateChangingTools
			}
		}
	}
	for k := range r.Arguments {
		s.Arguments = append(s.Arguments, k)
	}
	slices.Sort(s.Arguments)
	// As singleRead: one catalogue tool, read-only, not opaque.
	if len(r.Signature) == 1 && !s.ProcOnly && r.ReadOnly && !r.Opaque && len(r.UnknownTools) == 0 {
		s.SingleRead = signature.Name(r.Signature)
	}
	return s
}
