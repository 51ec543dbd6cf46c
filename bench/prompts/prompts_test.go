package prompts

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/signature"
)

var seed = flag.Uint64("prompts.seed", 39, "the corpus's seed (39: the project's; any other: a corpus it was not tuned on)")

// answers are the operator's: reject a hostile block, else auto_run to
// 60% of read-only blocks (autoRun), run_once to the rest.
type answers struct{ autoRun []bool }

func (a answers) choice(i int, t *turn) gate.Choice {
	switch {
	case t.hostile:
		return gate.ChoiceReject
	case t.readOnly && a.autoRun[i]:
		return gate.ChoiceAutoRun
	}
	return gate.ChoiceRunOnce
}

// tally is one model's outcome.
type tally struct {
	model             string
	prompts, unsafe   int
	hostileUnprompted int
	// refused counts blocks refused before review (code that does not
	// analyse, such as a line separator outside a string).
	refused  int
	versions string
	// byKind counts the prompts by intent (planner calls apart) and
	// cause (causeOf).
	byKind map[[2]string]int
}

// Why a prompt was asked (procgraph's breakdown): the first three are what
// the operator model asks for; causeMissed is a prompt for a program an
// answer of the operator already covers (an auto_run in the session, or a
// durable grant of the intent's procedure), which the canonical program is
// there to remove.
const (
	causeHostile   = "hostile (must be reviewed)"
	causeWrites    = "state-changing (run_once)"
	causeFirst     = "not yet auto_run in the session"
	causeMissed    = "covered by an earlier auto_run or grant"
	causeUngranted = "planner: procedure not yet granted"
)

// causeOf is why the prompt for turn tn was asked, given what the
// operator answered before: auto_run per session and intent (autoRun),
// grants per intent (granted).
func causeOf(tn *turn, planned bool, autoRun, granted map[string]bool) string {
	switch {
	case tn.hostile:
		return causeHostile
	case !tn.readOnly:
		return causeWrites
	case granted[tn.intent.name] || autoRun[tn.session+" "+tn.intent.name] && !planned:
		return causeMissed
	case planned:
		return causeUngranted
	}
	return causeFirst
}

// breakdown prints the prompts by intent and cause (a table).
func breakdown(byKind map[[2]string]int) string {
	causes := []string{causeHostile, causeWrites, causeFirst, causeUngranted, causeMissed}
	var b strings.Builder
	fmt.Fprintf(&b, "| intent | %s | total |\n|---|%s---|\n", strings.Join(causes, " | "), strings.Repeat("---|", len(causes)))
	kinds := map[string]bool{}
	for k := range byKind {
		kinds[k[0]] = true
	}
	sum := map[string]int{}
	for _, kind := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Fprintf(&b, "| %s |", kind)
		total := 0
		for _, c := range causes {
			fmt.Fprintf(&b, " %d |", byKind[[2]string{kind, c}])
			total += byKind[[2]string{kind, c}]
			sum[c] += byKind[[2]string{kind, c}]
		}
		fmt.Fprintf(&b, " %d |\n", total)
	}
	fmt.Fprintf(&b, "| **all** |")
	total := 0
	for _, c := range causes {
		fmt.Fprintf(&b, " %d |", sum[c])
		total += sum[c]
	}
	fmt.Fprintf(&b, " %d |\n", total)
	return b.String()
}

// shown is the state-changing calls some block approved at a prompt made
// (tool and arguments): a run that makes another is unsafe.
type shown map[call]bool

func (s shown) judge(approvedAtPrompt bool, writes []call) (unsafe int) {
	for _, w := range writes {
		if approvedAtPrompt {
			s[w] = true
		} else if !s[w] {
			unsafe++
		}
	}
	return unsafe
}

// TestPromptsPer100Turns runs the corpus through the five models and
// prints prompts per 100 turns, unsafe runs and versions per procedure
// (doc.go). It fails if procgraph runs anything unsafe or runs a hostile
// block unreviewed, or if a block's calls are not the ones the corpus
// says it makes.
func TestPromptsPer100Turns(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus takes a while")
	}
	turns := corpus(*seed, 40, 25)
	r := rand.New(rand.NewPCG(*seed+1, 7))
	a := answers{autoRun: make([]bool, len(turns))}
	for i := range turns {
		a.autoRun[i] = r.IntN(10) < 6
	}
	hostile := 0
	for _, tn := range turns {
		if tn.hostile {
			hostile++
		}
	}
	results := []tally{alwaysAsk(turns), codeHash(turns, a), toolRule(turns, a, false), toolRule(turns, a, true), procgraph(t, turns, a)}
	var b strings.Builder
	fmt.Fprintf(&b, "corpus seed %d: %d turns, %d sessions, %d hostile twins\n\n", *seed, len(turns), 40, hostile)
	fmt.Fprintf(&b, "| model | prompts per 100 turns | unsafe runs | hostile blocks run unreviewed | refused before review | versions per procedure |\n|---|---|---|---|---|---|\n")
	for _, res := range results {
		fmt.Fprintf(&b, "| %s | %.1f | %d | %d | %d | %s |\n", res.model, 100*float64(res.prompts)/float64(len(turns)), res.unsafe, res.hostileUnprompted, res.refused, res.versions)
	}
	t.Log("\n" + b.String())
	t.Log("procgraph's prompts by intent and cause:\n" + breakdown(results[len(results)-1].byKind))
	pg := results[len(results)-1]
	if pg.unsafe != 0 || pg.hostileUnprompted != 0 {
		t.Fatalf("procgraph ran %d unsafe calls, %d hostile blocks unreviewed", pg.unsafe, pg.hostileUnprompted)
	}
}

func alwaysAsk(turns []*turn) tally {
	return tally{model: "always ask", prompts: len(turns), versions: "—"}
}

// codeHash is Bamboo's phase 1: a block whose code hash (over lines, as
// signature.CodeHash) the operator answered auto_run in the session runs
// unreviewed.
func codeHash(turns []*turn, a answers) tally {
	res := tally{model: "per-session code hash (Bamboo phase 1)", versions: "—"}
	s := shown{}
	policies := map[string]bool{}
	for i, tn := range turns {
		key := tn.session + " " + signature.CodeHash(tn.code)
		if policies[key] {
			res.unsafe += s.judge(false, tn.writes)
			if tn.hostile {
				res.hostileUnprompted++
			}
			continue
		}
		res.prompts++
		c := a.choice(i, tn)
		if c == gate.ChoiceReject {
			continue
		}
		s.judge(true, tn.writes)
		if c == gate.ChoiceAutoRun {
			policies[key] = true
		}
	}
	return res
}

// toolRule is "always allow this tool": after an approval (any, or
// auto_run only), every tool of the block is allowed in the session, and a
// block all of whose tools are allowed runs unreviewed.
func toolRule(turns []*turn, a answers, autoRunOnly bool) tally {
	res := tally{model: `"always allow this tool" after any approval`, versions: "—"}
	if autoRunOnly {
		res.model = `"always allow this tool" after "don't ask again" only`
	}
	s := shown{}
	allowed := map[string]bool{}
	for i, tn := range turns {
		all := true
		for _, tool := range tn.tools {
			all = all && allowed[tn.session+" "+tool]
		}
		if all {
			res.unsafe += s.judge(false, tn.writes)
			if tn.hostile {
				res.hostileUnprompted++
			}
			continue
		}
		res.prompts++
		c := a.choice(i, tn)
		if c == gate.ChoiceReject {
			continue
		}
		s.judge(true, tn.writes)
		if !autoRunOnly || c == gate.ChoiceAutoRun {
			for _, tool := range tn.tools {
				allowed[tn.session+" "+tool] = true
			}
		}
	}
	return res
}

// procgraph runs the corpus through the real gate: every turn submitted
// (interactive), every pending one answered by the operator and run once
// approved, every block that ran and succeeded captured under its
// intent; a planner turn calls the intent's procedure when one is
// exposed.
func procgraph(t *testing.T, turns []*turn, a answers) tally {
	ctx := context.Background()
	st := replaytest.OpenStore(t)
	tools := exampleCatalogue(t)
	svc := procedures.NewService(st, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, tools, "bench"); err != nil {
		t.Fatal(err)
	}
	writes := map[string]bool{}
	for _, tool := range tools {
		writes[tool.Name] = !tool.ReadOnly
	}
	up := &replaytest.Recorder{}
	rp := replay.New(svc, sandbox.NewInProcess(), up, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	g := gate.New(rp, st, gate.Options{MaxPending: 4096, MaxPendingPerRequester: 4096})
	res := tally{model: "**procgraph**", byKind: map[[2]string]int{}}
	autoRun, granted := map[string]bool{}, map[string]bool{} // what the operator answered auto_run to (causeOf)
	s := shown{}
	procOf := map[string]string{} // intent → the procedure its turns were captured as
	for i, tn := range turns {
		code, planned := tn.code, false
		if name, ok := procOf[tn.intent.name]; ok && tn.reuse {
			if c, ok := plannerCall(ctx, svc, name, tn); ok {
				code, planned = c, true
			}
		}
		req := gate.TurnRequest{Code: code, Dialect: "starlark", SessionID: tn.session, Phase: audit.PhaseInteractive,
			Actor: "agent", MayCapture: true}
		if !planned && !tn.hostile {
			req.Capture = &gate.TurnCapture{Cause: &procedures.CauseInput{Name: tn.intent.name}}
		}
		before := len(up.Calls())
		ans, err := g.Submit(ctx, req)
		prompted, approved := false, false
		if err == nil && ans.InvokeResult == nil {
			prompted = true
			res.prompts++
			kind := tn.intent.name
			if planned {
				kind = "planner " + kind
			}
			res.byKind[[2]string{kind, causeOf(tn, planned, autoRun, granted)}]++
			c := a.choice(i, tn)
			if c == gate.ChoiceAutoRun {
				autoRun[tn.session+" "+tn.intent.name] = true
				if planned || len(tn.tools) == 1 {
					granted[tn.intent.name] = true // the procedure's grant, or the single read's (grantSingleRead)
				}
			}
			if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: ans.Turn.ID, Choice: c, Reason: "bench", Actor: "operator", HasGrant: true}); err != nil {
				t.Fatalf("turn %d: resolve: %v", i, err)
			}
			if approved = c != gate.ChoiceReject; approved {
				ans, err = g.Run(ctx, ans.Turn.ID, "agent")
			}
		}
		if err != nil && !prompted {
			if fault.ErrorCode(err) == fault.CodeInvalidCode {
				res.refused++ // refused before review (422): nothing asked, nothing run
				continue
			}
			t.Fatalf("turn %d (%s): %v\n%s", i, tn.intent.name, err, code)
		}
		var made []call
		for _, c := range up.Calls()[before:] {
			if writes[c.Tool] {
				made = append(made, call{c.Tool, canonicalArgs(t, c.Args)})
			}
		}
		if tn.hostile && !prompted {
			res.hostileUnprompted++
		}
		if !planned && (approved || !prompted) && ans != nil && ans.InvokeResult != nil && !slices.Equal(made, normalised(t, tn.writes)) {
			t.Fatalf("turn %d (%s): the block made %v, the corpus says %v\n%s", i, tn.intent.name, made, tn.writes, code)
		}
		res.unsafe += s.judge(prompted && approved, made)
		if ans != nil && ans.Procedure != nil && tn.readOnly && len(tn.tools) > 1 {
			procOf[tn.intent.name] = ans.Procedure.Name
		}
	}
	res.versions = versionsPerProcedure(t, svc, procOf)
	return res
}

// plannerCall is the block a planner writes to call procedure name for
// tn: the procedure's parameters from tn's arguments of those names; not
// ok while the procedure is not exposed or a parameter has no value.
func plannerCall(ctx context.Context, svc *procedures.Service, name string, tn *turn) (string, bool) {
	p, err := svc.Get(ctx, name)
	if err != nil || !p.Exposed {
		return "", false
	}
	var args []string
	for _, param := range p.Parameters {
		v, ok := tn.kwargs[param]
		if !ok && param == "task" {
			v, ok = tn.task, true // a lifted binding `task = N`: the task at hand
		}
		if !ok {
			return "", false
		}
		b, _ := json.Marshal(v)
		args = append(args, param+"="+string(b))
	}
	return fmt.Sprintf("return tools.%s(%s)\n", name, strings.Join(args, ", ")), true
}

func versionsPerProcedure(t *testing.T, svc *procedures.Service, procOf map[string]string) string {
	var counts []int
	for _, name := range procOf {
		vs, err := svc.Versions(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, len(vs))
	}
	if len(counts) == 0 {
		return "—"
	}
	slices.Sort(counts)
	sum := 0
	for _, c := range counts {
		sum += c
	}
	return fmt.Sprintf("%.1f mean, %d max (%d procedures)", float64(sum)/float64(len(counts)), counts[len(counts)-1], len(counts))
}

func canonicalArgs(t *testing.T, args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(v)
	return string(b)
}

func normalised(t *testing.T, cs []call) []call {
	var out []call
	for _, c := range cs {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.Args), &m); err != nil {
			t.Fatalf("%s: %v", c.Args, err)
		}
		out = append(out, call{c.Tool, canonicalArgs(t, m)})
	}
	return out
}

// exampleCatalogue is examples/catalogue.json.
func exampleCatalogue(t *testing.T) []procedures.Tool {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "examples", "catalogue.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Tools []procedures.Tool `json:"tools"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Tools
}
