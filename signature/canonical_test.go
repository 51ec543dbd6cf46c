package signature

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/internal/blocksyntax"
	"go.starlark.net/starlark"
)

// testReadOnly is the corpus's classification: tools named get_*, find_*,
// search_*, list_* are read-only, every other changes state.
func testReadOnly(tool string) bool {
	for _, p := range []string{"get_", "find_", "search_", "list_"} {
		if strings.HasPrefix(tool, p) {
			return true
		}
	}
	return false
}

// canonBlock is one block of the canonical corpus.
type canonBlock struct {
	name    string // same/NAME.a.star …
	code    string
	dialect Dialect
}

// canonAndAnalysisCorpora is canonCorpus followed by every block of the
// analysis corpus (corpusFiles), named corpus/FILE.
func canonAndAnalysisCorpora(tb testing.TB) []canonBlock {
	tb.Helper()
	blocks := canonCorpus(tb)
	for _, path := range corpusFiles(tb) {
		code, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		blocks = append(blocks, canonBlock{name: "corpus/" + filepath.Base(path), code: string(code), dialect: dialectOf(path)})
	}
	return blocks
}

// canonCorpus reads testdata/canonical/pairs.txtar: files headed
// "-- NAME --", the text before the first header a comment.
func canonCorpus(tb testing.TB) []canonBlock {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "canonical", "pairs.txtar"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []canonBlock
	for _, part := range strings.Split("\n"+string(data), "\n-- ")[1:] {
		header, body, ok := strings.Cut(part, " --\n")
		if !ok {
			tb.Fatalf("bad header in %q", part)
		}
		d := Starlark
		if strings.HasSuffix(header, ".py") {
			d = PythonAsync
		}
		out = append(out, canonBlock{name: header, code: body, dialect: d})
	}
	return out
}

// canonPair is a pair of the corpus: same or differ.
type canonPair struct {
	name string
	same bool
	a, b canonBlock
}

func canonPairs(tb testing.TB) []canonPair {
	blocks := canonCorpus(tb)
	if len(blocks)%2 != 0 {
		tb.Fatalf("%d blocks: not pairs", len(blocks))
	}
	var out []canonPair
	for i := 0; i < len(blocks); i += 2 {
		a, b := blocks[i], blocks[i+1]
		name, _, _ := strings.Cut(a.name, ".a.")
		if bname, _, _ := strings.Cut(b.name, ".b."); bname != name || !strings.Contains(a.name, ".a.") {
			tb.Fatalf("blocks %s and %s are not a pair", a.name, b.name)
		}
		out = append(out, canonPair{name: name, same: strings.HasPrefix(name, "same/"), a: a, b: b})
	}
	return out
}

// TestCanonicalPairs: the pairs of the corpus share a canonical hash
// (same/) or do not (differ/), and each pair's blocks analyse.
func TestCanonicalPairs(t *testing.T) {
	pairs := canonPairs(t)
	if len(pairs) < 40 {
		t.Fatalf("%d pairs", len(pairs))
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			_, ca, err := AnalyzeCanonical(p.a.code, p.a.dialect, testReadOnly)
			if err != nil {
				t.Fatalf("a: %v", err)
			}
			_, cb, err := AnalyzeCanonical(p.b.code, p.b.dialect, testReadOnly)
			if err != nil {
				t.Fatalf("b: %v", err)
			}
			if (ca.Hash == cb.Hash) != p.same {
				t.Fatalf("same hash: %v, want %v\n--- a\n%s--- b\n%s", ca.Hash == cb.Hash, p.same, ca.Program, cb.Program)
			}
		})
	}
}

// TestCanonicalProgram: what the canonical program prints, on cases that
// show each rule.
func TestCanonicalProgram(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     string
		readOnly func(string) bool
		want     string
	}{
		{"locals in order of first binding, parameters kept", "b = tools.get_a(k=p)\na = [x for x in b]\nreturn [a, b]\n", testReadOnly,
			"v1 = tools.get_a(k=p)\nv2 = [v3 for v3 in v1]\nreturn [v2, v1]\n"},
		{"a fresh name skips a kept one", "x = tools.get_a(k=v1)\nreturn [x]\n", testReadOnly,
			"v2 = tools.get_a(k=v1)\nreturn [v2]\n"},
		{"a return of the name bound just before is one return", "s = tools.get_a(k=1)\nresult = {'a': s}\nreturn result\n", testReadOnly,
			"v1 = tools.get_a(k=1)\nreturn {\"a\": v1}\n"},
		{"a name read again is not folded", "s = tools.get_a(k=1)\nresult = [s]\nreturn [result, s]\n", testReadOnly,
			"v1 = tools.get_a(k=1)\nv2 = [v1]\nreturn [v2, v1]\n"},
		{"a name bound twice is not folded", "s = tools.get_a(k=1)\ns = tools.get_b(k=2)\nreturn s\n", testReadOnly,
			"v1 = tools.get_a(k=1)\nv1 = tools.get_b(k=2)\nreturn v1\n"},
		{"an inlined binding", "t = 'a'\nreturn tools.kill(task=t)\n", testReadOnly,
			"return tools.kill(task=\"a\")\n"},
		{"reads sorted by their call", "b = tools.get_b(k=1)\na = tools.get_a(k=2)\nreturn [a, b]\n", testReadOnly,
			"v1 = tools.get_a(k=2)\nv2 = tools.get_b(k=1)\nreturn [v1, v2]\n"},
		{"gathered reads sorted with their targets", "b, a = [tools.get_b(k=1), tools.get_a(k=2)]\nreturn a\n", testReadOnly,
			"(v1, v2) = [tools.get_a(k=2), tools.get_b(k=1)]\nreturn v1\n"},
		{"no classification: nothing reordered", "b = tools.get_b(k=1)\na = tools.get_a(k=2)\n", nil,
			"v1 = tools.get_b(k=1)\nv2 = tools.get_a(k=2)\n"},
		{"operands in parentheses, literals by value", "return tools.get_a(k=-(0x1 + 2) * 3, s='\\u2028', f=2.50)\n", testReadOnly,
			"return tools.get_a(f=2.5, k=(-(1 + 2)) * 3, s=\"\\u2028\")\n"},
		{"nested functions keep their names and parameters", "def f(a, *b, **c):\n    x = a\n    return x\nreturn tools.get_a(k=f(a=1))\n", testReadOnly,
			"def f(a, *b, **c):\n    v1 = a\n    return v1\nreturn tools.get_a(k=f(a=1))\n"},
		{"elif, pass, a last return None", "if p:\n    pass\nelse:\n    if q:\n        tools.kill(k=1)\n    else:\n        pass\nreturn None\n", testReadOnly,
			"if p:\n    pass\nelif q:\n    tools.kill(k=1)\nelse:\n    pass\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c, err := AnalyzeCanonical(tc.code, Starlark, tc.readOnly)
			if err != nil {
				t.Fatal(err)
			}
			if c.Program != tc.want {
				t.Fatalf("program:\n%s\nwant:\n%s", c.Program, tc.want)
			}
			if c.Hash != CanonicalHash(c.Program) || !validHash.MatchString(c.Hash) {
				t.Fatalf("hash %s", c.Hash)
			}
		})
	}
}

// TestCanonicalAgreesWithAnalyze: AnalyzeCanonical's analysis is
// Analyze's, and its errors are too.
func TestCanonicalAgreesWithAnalyze(t *testing.T) {
	for _, b := range canonCorpus(t) {
		t.Run(b.name, func(t *testing.T) {
			want, err := Analyze(b.code, b.dialect)
			got, _, err2 := AnalyzeCanonical(b.code, b.dialect, testReadOnly)
			if fmt.Sprint(err) != fmt.Sprint(err2) || fmt.Sprintf("%+v", want) != fmt.Sprintf("%+v", got) {
				t.Fatalf("AnalyzeCanonical = %+v, %v; Analyze = %+v, %v", got, err2, want, err)
			}
		})
	}
}

// TestCanonicalIdempotent: on every block of the corpora that analyses,
// the canonical program analyses, its own canonical program is itself, and
// running both makes the same calls and returns the same value.
func TestCanonicalIdempotent(t *testing.T) {
	blocks := canonAndAnalysisCorpora(t)
	for _, b := range blocks {
		t.Run(b.name, func(t *testing.T) {
			checkCanonical(t, b.code, b.dialect)
		})
	}
}

// FuzzCanonical checks, for arbitrary code that analyses, that the
// canonical form is deterministic and idempotent, and that the block and
// its canonical program, run with a recording tools value, make the same
// calls (a multiset) and return the same value. Seeded with the canonical
// and the analysis corpora.
func FuzzCanonical(f *testing.F) {
	for _, b := range canonCorpus(f) {
		f.Add(b.code, b.dialect == PythonAsync)
	}
	for _, path := range corpusFiles(f) {
		code, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(code), dialectOf(path) == PythonAsync)
	}
	f.Fuzz(func(t *testing.T, code string, pythonAsync bool) {
		dialect := Starlark
		if pythonAsync {
			dialect = PythonAsync
		}
		checkCanonical(t, code, dialect)
	})
}

// checkCanonical checks the canonical program of code, if it analyses.
func checkCanonical(t *testing.T, code string, dialect Dialect) {
	t.Helper()
	a, c, err := AnalyzeCanonical(code, dialect, testReadOnly)
	if err != nil {
		return
	}
	_, again, _ := AnalyzeCanonical(code, dialect, testReadOnly)
	if *again != *c {
		t.Fatalf("not deterministic:\n%s\n%s", c.Program, again.Program)
	}
	b, cc, err := AnalyzeCanonical(c.Program, Starlark, testReadOnly)
	if err != nil {
		t.Fatalf("the canonical program does not analyse: %v\n%s", err, c.Program)
	}
	if cc.Hash != c.Hash {
		t.Fatalf("not idempotent:\n%s---\n%s", c.Program, cc.Program)
	}
	if !slices.Equal(a.Signature, b.Signature) || !slices.Equal(a.Parameters, b.Parameters) || a.Opaque != b.Opaque {
		t.Fatalf("the canonical program's analysis differs: %+v\n%+v\n%s", a, b, c.Program)
	}
	ra := runRecorded(t, a.Source, a.Parameters)
	rb := runRecorded(t, c.Program, a.Parameters)
	if ra.stepLimit || rb.stepLimit {
		return
	}
	if (ra.err == nil) != (rb.err == nil) {
		t.Fatalf("one run failed: %v; %v\n%s---\n%s", ra.err, rb.err, a.Source, c.Program)
	}
	slices.Sort(ra.calls)
	slices.Sort(rb.calls)
	if !slices.Equal(ra.calls, rb.calls) || ra.result != rb.result {
		t.Fatalf("runs differ:\n%q -> %s\n%q -> %s\n%s---\n%s", ra.calls, ra.result, rb.calls, rb.result, a.Source, c.Program)
	}
	checkCanonicalParams(t, code, dialect, a, ra)
}

// checkCanonicalParams checks the canonical program up to parameter names
// of code (analysed as a, run as ra): deterministic, idempotent, and
// making the same calls with the same result when each parameter's value
// is given under its canonical name.
func checkCanonicalParams(t *testing.T, code string, dialect Dialect, a *Analysis, ra recorded) {
	t.Helper()
	_, c, params, err := AnalyzeCanonicalParams(code, dialect, testReadOnly)
	if err != nil {
		t.Fatalf("AnalyzeCanonicalParams: %v", err)
	}
	if _, again, _, _ := AnalyzeCanonicalParams(code, dialect, testReadOnly); *again != *c {
		t.Fatalf("not deterministic:\n%s\n%s", c.Program, again.Program)
	}
	if _, cc, _, err := AnalyzeCanonicalParams(c.Program, Starlark, testReadOnly); err != nil || cc.Hash != c.Hash {
		t.Fatalf("not idempotent (%v):\n%s", err, c.Program)
	}
	values := map[string]int{}
	given := map[string]bool{}
	for _, p := range a.Parameters {
		n, ok := params[p]
		if !ok || given[n] && n != "" {
			t.Fatalf("parameter %s renamed %q (%v): not one name each", p, n, params)
		}
		if n != "" {
			given[n] = true
			values[n] = int(fnvOf(p) % 100)
		}
	}
	rb := runRecordedWith(t, c.Program, values)
	if rb.stepLimit {
		return
	}
	slices.Sort(rb.calls)
	if (ra.err == nil) != (rb.err == nil) || !slices.Equal(ra.calls, rb.calls) || ra.result != rb.result {
		t.Fatalf("runs differ up to names:\n%q -> %s (%v)\n%q -> %s (%v)\n%s---\n%s", ra.calls, ra.result, ra.err, rb.calls, rb.result, rb.err, a.Source, c.Program)
	}
}

// recorded is what a run with recordingTools did.
type recorded struct {
	calls     []string // tool(k=v, …)@writes of every call, keywords sorted
	writes    int      // the state-changing calls so far
	result    string   // the block's value (String), "" on an error
	err       error
	stepLimit bool
}

// runRecorded runs a Starlark block with a recording tools value (each
// call answers a dict made from its name, its arguments and the number of
// state-changing calls before it — testReadOnly's classification — so
// reads answer the same in any order between two state-changing calls)
// and every parameter bound to a value made from its name.
func runRecorded(t *testing.T, source string, params []string) recorded {
	t.Helper()
	values := make(map[string]int, len(params))
	for _, p := range params {
		values[p] = int(fnvOf(p) % 100)
	}
	return runRecordedWith(t, source, values)
}

// runRecordedWith is runRecorded with each parameter's value given.
func runRecordedWith(t *testing.T, source string, values map[string]int) recorded {
	t.Helper()
	var rec recorded
	predeclared := starlark.StringDict{"tools": &recordingTools{rec: &rec}}
	for p, v := range values {
		predeclared[p] = starlark.MakeInt(v)
	}
	f, err := blocksyntax.Parse("canonical", source)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, source)
	}
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, source)
	}
	thread := &starlark.Thread{Name: "canonical", Print: func(*starlark.Thread, string) {}}
	const maxSteps = 20000
	thread.SetMaxExecutionSteps(maxSteps)
	globals, err := prog.Init(thread, predeclared)
	var v starlark.Value
	if err == nil {
		v, err = starlark.Call(thread, globals[blocksyntax.FuncName], nil, nil)
	}
	if thread.ExecutionSteps() >= maxSteps {
		rec.stepLimit = true
	}
	var ee *starlark.EvalError
	if err != nil && errors.As(err, &ee) && strings.Contains(ee.Msg, "too many steps") {
		rec.stepLimit = true
	}
	rec.err = err
	if err == nil {
		rec.result = v.String()
	}
	return rec
}

func fnvOf(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// recordingTools is the tests' tools: any attribute is a tool that records
// its call and answers from its name, its arguments and the state (the
// count of state-changing calls made).
type recordingTools struct{ rec *recorded }

func (r *recordingTools) String() string        { return "<tools>" }
func (r *recordingTools) Type() string          { return "tools" }
func (r *recordingTools) Freeze()               {}
func (r *recordingTools) Truth() starlark.Bool  { return starlark.True }
func (r *recordingTools) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tools") }
func (r *recordingTools) AttrNames() []string   { return nil }
func (r *recordingTools) Attr(name string) (starlark.Value, error) {
	return starlark.NewBuiltin("tools."+name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		parts := make([]string, 0, len(args)+len(kwargs))
		for _, a := range args {
			parts = append(parts, a.String())
		}
		kw := make([]string, 0, len(kwargs))
		for _, kv := range kwargs {
			kw = append(kw, string(kv[0].(starlark.String))+"="+kv[1].String())
		}
		sort.Strings(kw)
		// A call is recorded with the number of state-changing calls
		// before it, and answered from that too: a read moved across a
		// state-changing call, or two of those swapped, show.
		call := name + "(" + strings.Join(append(parts, kw...), ", ") + ")@" + strconv.Itoa(r.rec.writes)
		r.rec.calls = append(r.rec.calls, call)
		if !testReadOnly(name) {
			r.rec.writes++
		}
		h := int(fnvOf(call) % 1000)
		d := starlark.NewDict(4)
		_ = d.SetKey(starlark.String("tool"), starlark.String(name))
		_ = d.SetKey(starlark.String("n"), starlark.MakeInt(h))
		_ = d.SetKey(starlark.String("ok"), starlark.Bool(h%2 == 0))
		_ = d.SetKey(starlark.String("items"), starlark.NewList([]starlark.Value{starlark.MakeInt(h % 7), starlark.String(call)}))
		return d, nil
	}), nil
}

// FuzzCanonicalGenerated checks checkCanonical's properties on blocks made
// from the fuzzer's bytes by a small grammar of what agents write — reads
// and state-changing calls with literal, parameter, bound or computed
// arguments, literal bindings, conditions, loops, gathered reads — where
// the byte-level FuzzCanonical seldom reaches code that analyses.
func FuzzCanonicalGenerated(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 0, 0, 1, 0, 2, 6, 9, 9, 9, 5, 5, 2, 1})
	f.Add([]byte{7, 7, 1, 0, 4, 3, 8, 2, 2, 0, 6, 1, 9})
	f.Fuzz(func(t *testing.T, choices []byte) {
		checkCanonical(t, generateBlock(choices), Starlark)
	})
}

// generateBlock writes a block from choices (each byte picks the next
// production).
func generateBlock(choices []byte) string {
	i := 0
	next := func(n int) int {
		if i >= len(choices) {
			return 0
		}
		i++
		return int(choices[i-1]) % n
	}
	tools := []string{"get_a", "get_b", "search_c", "kill_d", "retry_e", "mystery"}
	var locals, bindings []string
	atom := func() string {
		switch next(6) {
		case 0:
			return strconv.Itoa(next(3))
		case 1:
			return []string{`"x"`, `'x'`, `"y"`}[next(3)]
		case 2:
			return []string{"p", "q"}[next(2)]
		case 3:
			if len(bindings) > 0 {
				return bindings[next(len(bindings))]
			}
		case 4:
			if len(locals) > 0 {
				return locals[next(len(locals))] + `["n"]`
			}
		}
		return "True"
	}
	call := func() string {
		tool := tools[next(len(tools))]
		args := []string{"k=" + atom()}
		if next(2) == 1 {
			args = append(args, "j="+atom())
		}
		return "tools." + tool + "(" + strings.Join(args, ", ") + ")"
	}
	var b strings.Builder
	for n := 0; n < 12 && i < len(choices); n++ {
		name := "x" + strconv.Itoa(n)
		switch next(9) {
		case 0, 1:
			b.WriteString(name + " = " + call() + "\n")
			locals = append(locals, name)
		case 2:
			b.WriteString(call() + "\n")
		case 3:
			name = "t" + strconv.Itoa(n)
			b.WriteString(name + " = " + []string{"42", `"id"`, "-1", "2.5"}[next(4)] + "\n")
			bindings = append(bindings, name)
		case 4:
			if len(locals) > 0 {
				b.WriteString("if " + locals[next(len(locals))] + `["ok"]:` + "\n    " + call() + "\n")
			}
		case 5:
			if len(locals) > 0 {
				b.WriteString("for i in " + locals[next(len(locals))] + `["items"]:` + "\n    " + call() + "\n")
			}
		case 6:
			b.WriteString(name + ", y" + name + " = [" + call() + ", " + call() + "]\n")
			locals = append(locals, name, "y"+name)
		case 7:
			if len(bindings) > 0 {
				b.WriteString(bindings[next(len(bindings))] + " = " + atom() + "\n")
			}
		case 8:
			if len(locals) > 0 {
				b.WriteString("return [" + strings.Join(locals, ", ") + "]\n")
			}
		}
	}
	b.WriteString("tools.get_a(k=0)\n")
	return b.String()
}
