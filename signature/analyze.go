package signature

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/procgraph/procgraph/internal/blocksyntax"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// MaxCodeBytes is the largest code Analyze accepts (64 KiB); larger code is
// an *Error with Feature "code_size".
const MaxCodeBytes = 64 << 10

// toolsName is the predeclared object through which a block calls tools.
const toolsName = "tools"

// procPrefix starts the name of a procedure used as a tool.
const procPrefix = "proc__"

// Analysis is the result of analysing a block.
type Analysis struct {
	Signature []string // sorted, de-duplicated names N of every tools.N on the predeclared tools
	Name      string   // the proc__ name of Signature (Name)
	CodeHash  string   // CodeHash of the code as captured, before any rewrite
	// StatementHash is the hash of Source's tokens (StatementHash): two
	// blocks with one CodeHash and one StatementHash are one program.
	StatementHash string
	Parameters    []string  // sorted free variables other than tools and Starlark universe built-ins
	ProcRefs      []string  // the Signature entries that start with "proc__", sorted
	Opaque        bool      // any use of the predeclared tools other than tools.N
	Warnings      []Warning // one per opaque use, plus other advisory notes, by position
	Source        string    // the Starlark block the sandbox runs (code itself for dialect starlark)
	// Flows lists every parameter passed directly as a keyword argument of
	// a tool call (tools.N(k=param)), sorted by parameter, tool, keyword,
	// position: where the procedure's typed input schema comes from.
	Flows []Flow
}

// Clone is a copy of a sharing nothing a caller may change (its slices).
func (a *Analysis) Clone() *Analysis {
	c := *a
	c.Signature, c.Parameters, c.ProcRefs = slices.Clone(a.Signature), slices.Clone(a.Parameters), slices.Clone(a.ProcRefs)
	c.Warnings, c.Flows = slices.Clone(a.Warnings), slices.Clone(a.Flows)
	return &c
}

// Analyze parses and analyses a block of code written in dialect. Invalid
// code returns an *Error; so does code whose signature is empty (Feature
// "empty_signature").
func Analyze(code string, dialect Dialect) (*Analysis, error) {
	return analyze(code, dialect, false, nil)
}

// analysed is what an analysis worked on, kept for lifting (AnalyzeLift):
// the code's tokens, the source's (the same when the source is the code),
// the resolved syntax tree of the source and the map of the source's
// positions to the code's.
type analysed struct {
	toks, srcToks []token
	file          *syntax.File
	pm            *posMap
}

// analyze is Analyze. The token-level feature check only matters when the
// code is rejected: every feature it names makes the Starlark parser, the
// resolver or the rewrite fail too (they are reserved words or unknown
// tokens in Starlark). So by default the code is tokenized only when
// needed (python-async code that uses await/async/asyncio, or a failure),
// and on a failure a feature found by the token check takes precedence, as
// if it had run first. eager runs the check first; tests assert that both
// give the same result.
func analyze(code string, dialect Dialect, eager bool, keep *analysed) (*Analysis, error) {
	if dialect != Starlark && dialect != PythonAsync {
		return nil, &Error{Feature: "dialect", Message: fmt.Sprintf("unknown dialect %q", dialect)}
	}
	if len(code) > MaxCodeBytes {
		return nil, &Error{Feature: "code_size",
			Message: fmt.Sprintf("code is %d bytes, more than the %d allowed", len(code), MaxCodeBytes)}
	}
	if err := checkEncoding(code); err != nil {
		return nil, err
	}
	var toks []token
	var terr *Error
	tokenized := false
	tokens := func() {
		if !tokenized {
			toks, terr = tokenize(code)
			tokenized = true
		}
	}
	// fail returns the first Python feature in the code, else the
	// tokenizer's error, else err.
	fail := func(err error) (*Analysis, error) {
		tokens()
		if f := checkFeatures(code, toks, dialect); f != nil {
			return nil, f
		}
		if terr != nil {
			return nil, terr
		}
		return nil, err
	}
	// The code's tokens are always needed: where its string literals are
	// (checkSeparators) and, for dialect starlark, the statement hash.
	tokens()
	if err := checkSeparators(code, toks); err != nil {
		return nil, err
	}
	if eager {
		if f := checkFeatures(code, toks, dialect); f != nil || terr != nil {
			return fail(nil)
		}
	}
	source, pm := code, (*posMap)(nil)
	var escapeWarnings []Warning
	if dialect == PythonAsync && (strings.Contains(code, "await") || strings.Contains(code, "async") || strings.Contains(code, `\`)) {
		tokens()
		if terr != nil {
			return fail(terr)
		}
		edits, err := rewriteAsync(code, toks)
		if err != nil {
			return fail(err)
		}
		var escapes []edit
		escapes, escapeWarnings = escapeEdits(code, toks)
		edits = mergeEdits(edits, escapes)
		source = applyEdits(code, edits)
		pm = newPosMap(code, source, edits)
	}
	a, file, err := analyzeSource(source, pm)
	if err != nil {
		return fail(err)
	}
	if keep != nil {
		keep.toks, keep.srcToks, keep.file, keep.pm = toks, toks, file, pm
	}
	if len(escapeWarnings) > 0 {
		a.Warnings = append(a.Warnings, escapeWarnings...)
		sortWarnings(a.Warnings)
	}
	a.CodeHash = CodeHash(code)
	if terr != nil {
		return fail(terr) // Starlark accepted what the tokenizer did not: refuse it
	}
	if source == code {
		a.StatementHash = statementHash(code, toks)
	} else {
		srcToks, err := tokenize(source)
		if err != nil {
			return fail(err)
		}
		a.StatementHash = statementHash(source, srcToks)
		if keep != nil {
			keep.srcToks = srcToks
		}
	}
	if len(a.Signature) == 0 {
		msg := "the code calls no tool (no tools.NAME): an empty signature is not a procedure"
		if a.Opaque {
			msg = "the code calls no tool statically (no tools.NAME, only opaque uses of tools): an empty signature is not a procedure"
		}
		return nil, &Error{Feature: "empty_signature", Message: msg}
	}
	return a, nil
}

// checkEncoding rejects code that is not valid UTF-8 or contains NUL bytes.
func checkEncoding(code string) *Error {
	for i := 0; i < len(code); {
		c := code[i]
		if c == 0 {
			line, col := lineColOf(code, i)
			return errorAt(line, col, "encoding", "the code contains a NUL byte")
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(code[i:])
		if r == utf8.RuneError && n == 1 {
			line, col := lineColOf(code, i)
			return errorAt(line, col, "encoding", "the code is not valid UTF-8 (byte 0x%02x)", c)
		}
		i += n
	}
	return nil
}

// analyzeSource parses, resolves and walks a Starlark block, and returns
// the resolved file too. pm maps positions back to the code as written.
func analyzeSource(source string, pm *posMap) (*Analysis, *syntax.File, error) {
	f, err := blocksyntax.Parse("procedure", source)
	if err != nil {
		return nil, nil, starlarkError(err, pm)
	}
	for _, s := range f.Stmts[0].(*syntax.DefStmt).Body {
		if l, ok := s.(*syntax.LoadStmt); ok {
			line, col := pm.origPos(int(l.Load.Line), int(l.Load.Col))
			return nil, nil, errorAt(line, col, "load", "%s", keywordFeatures["load"][1])
		}
	}
	isPredeclared := func(string) bool { return true }
	if err := resolve.File(f, isPredeclared, starlark.Universe.Has); err != nil {
		return nil, nil, starlarkError(err, pm)
	}
	a := &Analysis{Source: source, Signature: []string{}, Parameters: []string{}, ProcRefs: []string{}, Warnings: []Warning{}}
	sig := map[string]bool{}
	params := map[string]syntax.Position{} // first use of each parameter
	var calls []*syntax.CallExpr
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			calls = append(calls, n)
		case *syntax.DotExpr:
			if isPredeclaredTools(n.X) {
				sig[n.Name.Name] = true
				return false
			}
		case *syntax.Ident:
			b, _ := n.Binding.(*resolve.Binding)
			if b == nil || b.Scope != resolve.Predeclared {
				return true
			}
			if n.Name == toolsName {
				a.Opaque = true
				line, col := pm.origPos(int(n.NamePos.Line), int(n.NamePos.Col))
				a.Warnings = append(a.Warnings, Warning{Line: line, Column: col,
					Message: fmt.Sprintf("line %d, column %d: opaque use of tools (only tools.NAME is visible to analysis; the call is checked at run time)", line, col)})
			} else if _, seen := params[n.Name]; !seen && !starlark.Universe.Has(n.Name) {
				params[n.Name] = n.NamePos
			}
		}
		return true
	})
	a.Signature = sortedKeys(sig)
	for p := range params {
		a.Parameters = append(a.Parameters, p)
	}
	sort.Strings(a.Parameters)
	isParam := func(name string) bool { _, ok := params[name]; return ok }
	a.Flows = []Flow{}
	for _, c := range calls {
		a.Flows = append(a.Flows, callFlows(c, isParam, pm)...)
	}
	sortFlows(a.Flows)
	for _, s := range a.Signature {
		if strings.HasPrefix(s, procPrefix) {
			a.ProcRefs = append(a.ProcRefs, s)
		}
	}
	for _, p := range a.Parameters {
		if hint, ok := pythonOnlyNames[p]; ok {
			line, col := pm.origPos(int(params[p].Line), int(params[p].Col))
			a.Warnings = append(a.Warnings, Warning{Line: line, Column: col, Message: fmt.Sprintf(
				"line %d, column %d: %s is not a Starlark built-in, so it is treated as a parameter%s", line, col, p, hint)})
		}
	}
	sortWarnings(a.Warnings)
	a.Name = Name(a.Signature)
	return a, f, nil
}

func isPredeclaredTools(e syntax.Expr) bool {
	id, ok := e.(*syntax.Ident)
	if !ok || id.Name != toolsName {
		return false
	}
	b, _ := id.Binding.(*resolve.Binding)
	return b != nil && b.Scope == resolve.Predeclared
}

// starlarkError converts a parse or resolve error into an *Error.
func starlarkError(err error, pm *posMap) *Error {
	var pos syntax.Position
	var msg string
	var se syntax.Error
	var rl resolve.ErrorList
	switch {
	case errors.As(err, &se):
		pos, msg = se.Pos, se.Msg
	case errors.As(err, &rl):
		pos, msg = rl[0].Pos, rl[0].Msg
	default:
		return &Error{Feature: "syntax", Message: "syntax error: " + err.Error()}
	}
	line, col := pm.origPos(int(pos.Line), int(pos.Col))
	if msg == "excessive nesting" {
		return errorAt(line, col, "nesting", "expressions nested too deeply")
	}
	return errorAt(line, col, "syntax", "syntax error: %s", msg)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pythonOnlyNames are common Python built-ins and modules absent from
// Starlark; used as free variables they become parameters, so Analyze notes
// them in a Warning.
var pythonOnlyNames = map[string]string{
	"asyncio":    " (use dialect python-async for asyncio.gather)",
	"isinstance": " (use type(x) == \"dict\")",
	"map":        " (use a comprehension)",
	"filter":     " (use a comprehension)",
	"json":       " (tool results are already values)",
	"sum":        "", "round": "", "open": "", "eval": "", "exec": "", "iter": "", "next": "",
	"divmod": "", "pow": "", "callable": "", "super": "", "__import__": "", "globals": "",
	"locals": "", "vars": "", "math": "", "os": "", "sys": "",
	"Exception": "", "ValueError": "", "KeyError": "", "TypeError": "", "RuntimeError": "",
}

// sortWarnings orders warnings by position.
func sortWarnings(ws []Warning) {
	sort.SliceStable(ws, func(i, j int) bool {
		wi, wj := ws[i], ws[j]
		return wi.Line < wj.Line || wi.Line == wj.Line && wi.Column < wj.Column
	})
}
