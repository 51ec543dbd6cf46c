package signature

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Lifting literals into parameters (docs/design.md "Lifting literals into
// parameters"): the rewrite half, on the analysed code. AnalyzeLift finds
// every literal scalar keyword argument of a tool call, tools.T(k=42), and
// every top-level binding of a literal used only as such arguments
// (tid = 42 ... tools.T(k=tid)); whether one is lifted is the caller's
// (the catalogue's) decision, LiftPlan.Apply's accept. The rewrite then
// works on the tokens of the code as written, in both dialects: a literal's
// token is replaced by the parameter's name, a lifted binding's statement is
// blanked (its line stays), so strings and comments are never touched and
// lines never move. The lifted code is analysed again: it must have the
// same signature and opacity, and take every lifted name as a parameter,
// or nothing is lifted.

// MaxLiftInteger bounds a lifted integer's magnitude: 2^53, the integers a
// JSON example carries exactly to every client.
const MaxLiftInteger = 1 << 53

// LiftSite is one literal argument of a tool call that lifting could turn
// into a parameter.
type LiftSite struct {
	Tool    string // the tool called, tools.Tool(...)
	Keyword string // the keyword the literal is passed as
	// Value is the literal's value: int64, float64 (never integral), string
	// or bool.
	Value any
	// Binding is the top-level name the literal is bound to when the call
	// passes a name (tid = 42 ... tools.T(k=tid)), "" for a literal written
	// in the call.
	Binding string
	// Line and Column are the literal's position in the code as written
	// (for a binding, its literal's).
	Line, Column int
	// CallLine and CallColumn are the keyword argument's position.
	CallLine, CallColumn int
}

// Lifted is one literal lifted into a parameter.
type Lifted struct {
	Parameter string `json:"parameter"`
	Tool      string `json:"tool"`
	Argument  string `json:"argument"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	Example   any    `json:"example"`
}

// LiftResult is what LiftPlan.Apply made of the code.
type LiftResult struct {
	// Code is the lifted code (the code as written when nothing was lifted).
	Code string
	// Analysis is Code's analysis (the plan's own when nothing was lifted).
	Analysis *Analysis
	// Lifted lists every literal lifted, by position.
	Lifted []Lifted
	// Examples are the lifted parameters' example values, by parameter.
	Examples map[string]any
	// Warnings say why literals that could have been lifted were not.
	Warnings []Warning
}

// LiftPlan is the analysed code's lifting candidates (AnalyzeLift),
// collected on first use (Sites, Apply).
type LiftPlan struct {
	code    string
	dialect Dialect
	a       *Analysis
	// file is the analysis's resolved syntax tree (CanonicalParams).
	file *syntax.File
	// k is what the analysis worked on, until the candidates are collected.
	k     *analysed
	sites []LiftSite
	// srcToks are the analysed source's tokens; lines indexes the code
	// (made on first use).
	srcToks []token
	lines   *lineIndex
	// retokenized: the last Apply tokenized its lifted source (liftedTokens
	// could not make its tokens); for tests.
	retokenized bool
	// spans are the sites' literals in the code as written, srcSpans in
	// the analysed source (python-async); parallel to sites (empty for a
	// binding's use).
	spans, srcSpans []span
	// srcLines index the analysed source when it is not the code
	// (python-async), else nil.
	srcLines *lineIndex
	// bindings are the candidate top-level bindings, by name.
	bindings map[string]*liftBinding
	// others are the keys (valueKey) of the literals written outside a
	// tool call's keyword arguments (and not a candidate binding's).
	others map[string]bool
	// taken are the names the block already uses.
	taken map[string]bool
	// splats are the tool calls with ** arguments.
	splats []Warning
}

// span is a byte range of the code as written.
type span struct{ off, end int }

// liftBinding is a candidate top-level binding: name = literal.
type liftBinding struct {
	name  string
	value any
	stmt  span // name = literal, blanked when lifted
	src   span // the same statement in the analysed source
	line  int  // the literal's position
	col   int
	uses  []int // indexes of its sites
	valid bool  // every use is a site after the assignment
}

// AnalyzeLift is Analyze, and the lifting plan of the same analysis (its
// tokens and syntax tree: the code is analysed once). The candidates are
// collected when the plan is first used, so a plan left unused costs
// nothing beyond the analysis.
func AnalyzeLift(code string, dialect Dialect) (*Analysis, *LiftPlan, error) {
	keep := &analysed{}
	a, err := analyze(code, dialect, false, keep)
	if err != nil {
		return nil, nil, err
	}
	return a, &LiftPlan{code: code, dialect: dialect, a: a, file: keep.file, k: keep}, nil
}

// CanonicalParams is what AnalyzeCanonicalParams gives of the plan's code
// (as written, not lifted): its canonical program with the parameters
// renamed, and their names, made from the plan's own analysis (the code
// is not parsed again). readOnly is as AnalyzeCanonicalParams's.
func (p *LiftPlan) CanonicalParams(readOnly func(tool string) bool) (*Canonical, map[string]string) {
	return canonicalPrint(p.file, p.a, readOnly, true)
}

// Sites are the plan's candidates: every literal argument of a tool call
// that lifting could turn into a parameter, in the order of the code.
func (p *LiftPlan) Sites() []LiftSite {
	p.collect()
	return p.sites
}

// collect collects the candidates of the plan's analysis, once.
func (p *LiftPlan) collect() {
	k := p.k
	if k == nil {
		return
	}
	p.k, p.srcToks = nil, k.srcToks
	if k.pm != nil {
		p.lines = k.pm.origIndex() // pm's original is the code
	}
	p.bindings, p.others, p.taken = map[string]*liftBinding{}, map[string]bool{}, map[string]bool{}
	c := &collector{p: p, pm: k.pm, toks: k.toks}
	if p.a.Source != p.code {
		p.srcLines = k.pm.rewrittenLines() // the source is pm's rewritten code
	}
	body := k.file.Stmts[0].(*syntax.DefStmt).Body
	c.candidateBindings(body)
	syntax.Walk(k.file, c.visit)
	for _, b := range p.bindings {
		b.valid = b.valid && len(b.uses) > 0 && len(b.uses) == c.refs[b.name]
	}
}

// srcOffset is the byte offset in the analysed source of a syntax
// position (nil srcLines: the source is the code).
func (p *LiftPlan) srcOffset(pos syntax.Position) int {
	src := p.a.Source
	off := p.srcLines.starts[int(pos.Line)-1]
	if p.srcLines.ascii {
		return min(off+max(int(pos.Col)-1, 0), len(src))
	}
	for c := 1; c < int(pos.Col) && off < len(src); c++ {
		_, n := utf8.DecodeRuneInString(src[off:])
		off += n
	}
	return off
}

// srcSpan is the span of e in the analysed source.
func (p *LiftPlan) srcSpan(start syntax.Position, e syntax.Expr) span {
	if p.srcLines == nil {
		return span{}
	}
	_, end := e.Span()
	return span{p.srcOffset(start), p.srcOffset(end)}
}

// collector walks the resolved syntax tree for LiftPlan.
type collector struct {
	p    *LiftPlan
	pm   *posMap
	toks []token
	// bindingOf maps a candidate binding's resolve.Binding to it; refs counts
	// every reference to a candidate (its assignment aside).
	bindingOf map[*resolve.Binding]*liftBinding
	refs      map[string]int
	lhs       map[*syntax.Ident]bool // the candidates' assigned names
	rhs       map[syntax.Expr]bool   // the candidates' literals
}

// tokenAt returns the index of the token of the code as written at a
// position of the analysed source, or -1.
func (c *collector) tokenAt(pos syntax.Position) int {
	line, col := c.pm.origPos(int(pos.Line), int(pos.Col))
	i := sort.Search(len(c.toks), func(i int) bool {
		t := c.toks[i]
		return t.Line > line || t.Line == line && t.Col >= col
	})
	if i < len(c.toks) && c.toks[i].Line == line && c.toks[i].Col == col {
		return i
	}
	return -1
}

// literalSpan returns the span of a literal's tokens in the code as
// written (a number, a string without prefix or raw, True/False, a minus
// and a number), ok false when they are not what e is.
func (c *collector) literalSpan(e syntax.Expr) (span, bool) {
	var start syntax.Position
	switch e := e.(type) {
	case *syntax.Literal:
		start = e.TokenPos
	case *syntax.UnaryExpr:
		start = e.OpPos
	case *syntax.Ident:
		start = e.NamePos
	default:
		return span{}, false
	}
	i := c.tokenAt(start)
	if i < 0 {
		return span{}, false
	}
	src, t := c.p.code, c.toks[i]
	switch e := e.(type) {
	case *syntax.Literal:
		if e.Token == syntax.STRING && t.Kind == tokString && (t.Prefix == "" || t.Prefix == "r" || t.Prefix == "R") ||
			(e.Token == syntax.INT || e.Token == syntax.FLOAT) && t.Kind == tokNumber {
			return span{t.Off, t.End}, true
		}
	case *syntax.UnaryExpr:
		j := nextTok(c.toks, i)
		if isOp(src, t, "-") && j >= 0 && c.toks[j].Kind == tokNumber && !strings.ContainsAny(src[t.End:c.toks[j].Off], "\\\r\n") {
			return span{t.Off, c.toks[j].End}, true
		}
	case *syntax.Ident:
		if t.Kind == tokName && t.text(src) == e.Name {
			return span{t.Off, t.End}, true
		}
	}
	return span{}, false
}

// literalValue is a liftable literal's value: an int64 of magnitude at
// most MaxLiftInteger, a finite non-integral float64, a string of valid
// UTF-8, or True/False; ok false for anything else.
func literalValue(e syntax.Expr) (any, bool) {
	switch e := e.(type) {
	case *syntax.Literal:
		if e.Token == syntax.BYTES {
			return nil, false
		}
		return scalar(e.Value, false)
	case *syntax.UnaryExpr:
		if l, ok := e.X.(*syntax.Literal); ok && e.Op == syntax.MINUS && (l.Token == syntax.INT || l.Token == syntax.FLOAT) {
			return scalar(l.Value, true)
		}
	case *syntax.Ident:
		if isBuiltinBool(e) {
			return e.Name == "True", true
		}
	}
	return nil, false
}

// isBuiltinBool reports whether id is the built-in True or False (every
// free name resolves as predeclared in the analysis).
func isBuiltinBool(id *syntax.Ident) bool {
	b, _ := id.Binding.(*resolve.Binding)
	return b != nil && (b.Scope == resolve.Predeclared || b.Scope == resolve.Universal) && (id.Name == "True" || id.Name == "False")
}

func scalar(v any, negate bool) (any, bool) {
	switch v := v.(type) {
	case int64:
		if negate {
			v = -v
		}
		if v < -MaxLiftInteger || v > MaxLiftInteger {
			return nil, false
		}
		return v, true
	case float64:
		if negate {
			v = -v
		}
		if math.IsInf(v, 0) || math.IsNaN(v) || v == math.Trunc(v) {
			return nil, false // an integral float would reach a client as an integer
		}
		return v, true
	case string:
		if negate || !utf8.ValidString(v) {
			return nil, false
		}
		return v, true
	}
	return nil, false
}

// valueKey is a value's identity for "equal literals": numbers by value
// (Starlark's 1 == 1.0), strings and booleans by kind and value.
func valueKey(v any) string {
	switch v := v.(type) {
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<62 {
			return "n" + strconv.FormatInt(int64(v), 10)
		}
		return "f" + strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "s" + v
	case bool:
		return "b" + strconv.FormatBool(v)
	}
	return ""
}

// candidateBindings records the block's top-level statements name =
// literal as candidate bindings.
func (c *collector) candidateBindings(body []syntax.Stmt) {
	c.bindingOf, c.refs = map[*resolve.Binding]*liftBinding{}, map[string]int{}
	c.lhs, c.rhs = map[*syntax.Ident]bool{}, map[syntax.Expr]bool{}
	seen := map[*resolve.Binding]bool{}
	for _, s := range body {
		as, ok := s.(*syntax.AssignStmt)
		if !ok || as.Op != syntax.EQ {
			continue
		}
		id, ok := as.LHS.(*syntax.Ident)
		if !ok {
			continue
		}
		b, _ := id.Binding.(*resolve.Binding)
		if b == nil {
			continue
		}
		if seen[b] {
			if lb := c.bindingOf[b]; lb != nil {
				lb.valid = false // assigned twice
			}
			continue
		}
		seen[b] = true
		v, ok := literalValue(as.RHS)
		if !ok || b.Scope != resolve.Local || reservedName(id.Name) {
			continue
		}
		i := c.tokenAt(id.NamePos)
		lit, ok := c.literalSpan(as.RHS)
		if i < 0 || !ok || !c.toks[i].StmtStart {
			continue
		}
		// name = literal alone on its logical line: nothing but a comment follows.
		eq := nextTok(c.toks, i)
		if eq < 0 || !isOp(c.p.code, c.toks[eq], "=") {
			continue
		}
		if n := nextTokAfter(c.toks, lit.end); n >= 0 && c.toks[n].Kind != tokNewline {
			continue
		}
		line, col := c.pm.origPos(int(exprStart(as.RHS).Line), int(exprStart(as.RHS).Col))
		lb := &liftBinding{name: id.Name, value: v, stmt: span{c.toks[i].Off, lit.end}, src: c.p.srcSpan(id.NamePos, as.RHS),
			line: line, col: col, valid: true}
		c.p.bindings[id.Name] = lb
		c.bindingOf[b] = lb
		c.lhs[id] = true
		c.rhs[as.RHS] = true
	}
}

// nextTokAfter returns the index of the first non-comment token starting
// at or after byte offset off, or -1.
func nextTokAfter(toks []token, off int) int {
	for i, t := range toks {
		if t.Off >= off && t.Kind != tokComment {
			return i
		}
	}
	return -1
}

func exprStart(e syntax.Expr) syntax.Position {
	start, _ := e.Span()
	return start
}

// visit is the walk's function: tool calls' keyword arguments become
// sites, other literals are recorded as others, names as taken.
func (c *collector) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.CallExpr:
		dot, ok := n.Fn.(*syntax.DotExpr)
		if !ok || !isPredeclaredTools(dot.X) {
			return true
		}
		for _, arg := range n.Args {
			c.toolArg(dot.Name.Name, arg)
		}
		return false
	case *syntax.Ident:
		c.name(n)
	case *syntax.DotExpr:
		syntax.Walk(n.X, c.visit)
		return false // the attribute's name is no variable
	case *syntax.UnaryExpr, *syntax.Literal:
		if c.rhs[n.(syntax.Expr)] {
			return false
		}
		if k, ok := literalKey(n.(syntax.Expr)); ok {
			c.p.others[k] = true
			return false
		}
	}
	return true
}

// literalKey is the valueKey of any number or string literal (a negative
// number's too), ok false for other expressions.
func literalKey(e syntax.Expr) (string, bool) {
	neg := false
	if u, ok := e.(*syntax.UnaryExpr); ok && u.Op == syntax.MINUS {
		neg, e = true, u.X
	}
	l, ok := e.(*syntax.Literal)
	if !ok || neg && l.Token != syntax.INT && l.Token != syntax.FLOAT {
		return "", false
	}
	switch v := l.Value.(type) {
	case int64:
		if neg {
			v = -v
		}
		return valueKey(v), true
	case float64:
		if neg {
			v = -v
		}
		return valueKey(v), true
	case string:
		return valueKey(v), true
	}
	return "n" + l.Raw, true // a big integer
}

// name records an identifier: a name the block uses, a reference to a
// candidate binding.
func (c *collector) name(id *syntax.Ident) {
	b, _ := id.Binding.(*resolve.Binding)
	if b == nil {
		return
	}
	c.p.taken[id.Name] = true
	if isBuiltinBool(id) {
		c.p.others[valueKey(id.Name == "True")] = true
		return
	}
	if lb := c.bindingOf[b]; lb != nil && !c.lhs[id] {
		c.refs[lb.name]++
		if b.Scope != resolve.Local {
			lb.valid = false // shared with a nested function
		}
	}
}

// toolArg handles one argument of a call tools.tool(...).
func (c *collector) toolArg(tool string, arg syntax.Expr) {
	if u, ok := arg.(*syntax.UnaryExpr); ok && u.Op == syntax.STARSTAR {
		line, col := c.pm.origPos(int(u.OpPos.Line), int(u.OpPos.Col))
		c.p.splats = append(c.p.splats, Warning{Line: line, Column: col, Message: fmt.Sprintf(
			"line %d, column %d: the arguments of tools.%s splatted from a dict (**) are not lifted (pass them as keywords to make them parameters)", line, col, tool)})
		syntax.Walk(arg, c.visit)
		return
	}
	kw, ok := arg.(*syntax.BinaryExpr)
	if !ok || kw.Op != syntax.EQ {
		syntax.Walk(arg, c.visit)
		return
	}
	key, ok := kw.X.(*syntax.Ident)
	if !ok {
		syntax.Walk(arg, c.visit)
		return
	}
	kline, kcol := c.pm.origPos(int(key.NamePos.Line), int(key.NamePos.Col))
	if id, ok := kw.Y.(*syntax.Ident); ok {
		if b, _ := id.Binding.(*resolve.Binding); b != nil {
			if lb := c.bindingOf[b]; lb != nil {
				c.name(id)
				i := c.tokenAt(id.NamePos)
				if i < 0 || c.toks[i].Off < lb.stmt.end {
					lb.valid = false // used before it is bound
				}
				lb.uses = append(lb.uses, len(c.p.sites))
				c.p.add(LiftSite{Tool: tool, Keyword: key.Name, Value: lb.value, Binding: lb.name,
					Line: lb.line, Column: lb.col, CallLine: kline, CallColumn: kcol}, span{}, span{})
				return
			}
		}
	}
	v, ok := literalValue(kw.Y)
	if !ok {
		syntax.Walk(kw.Y, c.visit)
		return
	}
	sp, ok := c.literalSpan(kw.Y)
	if !ok {
		c.p.others[valueKey(v)] = true // a literal the rewrite cannot place
		return
	}
	start := exprStart(kw.Y)
	line, col := c.pm.origPos(int(start.Line), int(start.Col))
	c.p.add(LiftSite{Tool: tool, Keyword: key.Name, Value: v, Line: line, Column: col, CallLine: kline, CallColumn: kcol}, sp, c.p.srcSpan(start, kw.Y))
}

func (p *LiftPlan) add(s LiftSite, sp, src span) {
	if p.sites == nil {
		p.sites, p.spans, p.srcSpans = make([]LiftSite, 0, 8), make([]span, 0, 8), make([]span, 0, 8)
	}
	p.sites = append(p.sites, s)
	p.spans = append(p.spans, sp)
	p.srcSpans = append(p.srcSpans, src)
}

// reservedName reports whether name may not become a parameter: a
// keyword of Starlark or Python, a Starlark built-in, a Python-only name
// the analysis warns about, tools or asyncio.
func reservedName(name string) bool {
	if starlark.Universe.Has(name) || name == toolsName || name == "asyncio" || name == "__block__" {
		return true
	}
	if _, ok := keywordFeatures[name]; ok {
		return true
	}
	if _, ok := pythonOnlyNames[name]; ok {
		return true
	}
	switch name {
	case "and", "break", "continue", "def", "elif", "else", "for", "if", "in", "lambda", "not", "or",
		"pass", "return", "while", "await", "async", "assert", "None", "True", "False", "print", "match", "case", "type":
		return true
	}
	return false
}

// Verdict is the caller's answer for one site: whether it may be lifted,
// and, when not, why (a warning names it when Why is not "").
type Verdict struct {
	OK  bool
	Why string
}

// Apply lifts the sites accept approves. taken are further names the
// parameters must not take (a capture's params_schema properties). A
// direct literal is lifted only when accepted and its value is written
// nowhere else outside tool arguments; a binding only when every use is
// accepted. Equal accepted literals passed as one keyword are one
// parameter named after it (KEYWORD_2, _3 … when the name is taken). The
// lifted code's analysis must keep the signature and opacity and take
// every lifted name as a parameter; if it does not, nothing is lifted
// (a warning says so).
func (p *LiftPlan) Apply(accept func(LiftSite) Verdict, taken []string) *LiftResult {
	p.collect()
	// none is the result when nothing is lifted, with warnings.
	none := func(warnings []Warning) *LiftResult {
		return &LiftResult{Code: p.code, Analysis: p.a, Lifted: []Lifted{}, Examples: map[string]any{}, Warnings: warnings}
	}
	if len(p.sites) == 0 {
		return none(slices.Clone(p.splats))
	}
	res := &LiftResult{Lifted: make([]Lifted, 0, len(p.sites)), Examples: map[string]any{}, Warnings: slices.Clone(p.splats)}
	verdicts := make([]Verdict, len(p.sites))
	for i, s := range p.sites {
		verdicts[i] = accept(s)
	}
	warn := func(s LiftSite, format string, args ...any) {
		res.Warnings = append(res.Warnings, Warning{Line: s.Line, Column: s.Column, Message: fmt.Sprintf("line %d, column %d: ", s.Line, s.Column) + fmt.Sprintf(format, args...)})
	}
	others := p.others
	liftedBinding := map[string]bool{}
	for name, b := range p.bindings {
		ok := b.valid
		for _, i := range b.uses {
			ok = ok && verdicts[i].OK
		}
		if ok {
			liftedBinding[name] = true
			continue
		}
		if !others[valueKey(b.value)] {
			others = cloneSet(others)
			others[valueKey(b.value)] = true
		}
	}
	names := map[string]bool{}
	for n := range p.taken {
		names[n] = true
	}
	for _, n := range taken {
		names[n] = true
	}
	type group struct {
		param string
		value any
	}
	groups := map[[2]string]*group{}
	edits := make([]edit, 0, len(p.sites)+len(p.bindings))
	var srcEdits []edit
	if p.srcLines != nil {
		srcEdits = make([]edit, 0, cap(edits))
	}
	flows := make([]Flow, 0, len(p.sites)) // the lifted parameters' flows, positions in the code as written
	reported := map[string]bool{}
	for i, s := range p.sites {
		v := verdicts[i]
		if s.Binding != "" {
			b := p.bindings[s.Binding]
			switch {
			case liftedBinding[s.Binding]:
				res.Lifted = append(res.Lifted, Lifted{Parameter: s.Binding, Tool: s.Tool, Argument: s.Keyword, Line: s.Line, Column: s.Column, Example: s.Value})
				res.Examples[s.Binding] = s.Value
				flows = append(flows, Flow{Parameter: s.Binding, Tool: s.Tool, Keyword: s.Keyword, Line: s.CallLine, Column: s.CallColumn})
			case v.OK && !b.valid && !reported[s.Binding]:
				reported[s.Binding] = true
				warn(s, "%s is not lifted into a parameter: it is used outside tool arguments, bound more than once or after its use", s.Binding)
			case !v.OK && v.Why != "":
				warn(s, "%s", v.Why)
			}
			continue
		}
		if !v.OK {
			if v.Why != "" {
				warn(s, "%s", v.Why)
			}
			continue
		}
		if others[valueKey(s.Value)] {
			warn(s, "the literal passed to tools.%s as %s is not lifted: the same value is also written outside tool arguments", s.Tool, s.Keyword)
			continue
		}
		k := [2]string{s.Keyword, valueKey(s.Value)}
		g := groups[k]
		if g == nil {
			g = &group{param: freeName(s.Keyword, names), value: s.Value}
			names[g.param] = true
			groups[k] = g
		}
		sp := p.spans[i]
		edits = append(edits, edit{sp.off, sp.end, g.param + lineBreaks(p.code[sp.off:sp.end])})
		if src := p.srcSpans[i]; p.srcLines != nil {
			srcEdits = append(srcEdits, edit{src.off, src.end, g.param + lineBreaks(p.a.Source[src.off:src.end])})
		}
		flows = append(flows, Flow{Parameter: g.param, Tool: s.Tool, Keyword: s.Keyword, Line: s.CallLine, Column: s.CallColumn})
		res.Lifted = append(res.Lifted, Lifted{Parameter: g.param, Tool: s.Tool, Argument: s.Keyword, Line: s.Line, Column: s.Column, Example: s.Value})
		res.Examples[g.param] = s.Value
	}
	for name := range liftedBinding {
		b := p.bindings[name]
		edits = append(edits, edit{b.stmt.off, b.stmt.end, lineBreaks(p.code[b.stmt.off:b.stmt.end])})
		if p.srcLines != nil {
			srcEdits = append(srcEdits, edit{b.src.off, b.src.end, lineBreaks(p.a.Source[b.src.off:b.src.end])})
		}
	}
	sortWarnings(res.Warnings)
	if len(edits) == 0 {
		return none(res.Warnings)
	}
	slices.SortFunc(edits, func(a, b edit) int { return cmp.Compare(a.Off, b.Off) })
	slices.SortStableFunc(res.Lifted, func(a, b Lifted) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Argument, b.Argument))
	})
	slices.SortFunc(srcEdits, func(a, b edit) int { return cmp.Compare(a.Off, b.Off) })
	res.Code = applyEdits(p.code, edits)
	a, err := p.liftedAnalysis(res.Code, edits, srcEdits, flows, res.Examples)
	if msg := p.checkLifted(a, err, res.Examples); msg != "" {
		return none(append(res.Warnings, Warning{Message: "nothing was lifted: " + msg}))
	}
	res.Analysis = a
	return res
}

// liftedAnalysis is the analysis of the lifted code, code, made from the
// plan's own (the code is not parsed again): what Analyze(code) gives, as
// FuzzLift checks. edits made code of the code as written (srcEdits the
// lifted source of the analysed one, python-async); flows are the lifted
// parameters' flows (positions in the code as written).
func (p *LiftPlan) liftedAnalysis(code string, edits, srcEdits []edit, flows []Flow, examples map[string]any) (*Analysis, error) {
	old := p.a
	source, sourceEdits := code, edits
	if p.srcLines != nil {
		source, sourceEdits = applyEdits(old.Source, srcEdits), srcEdits
	}
	var statement string
	if p.retokenized = !liftedTokens(p.srcToks, sourceEdits, func(token) bool { return true }); p.retokenized {
		toks, err := tokenize(source)
		if err != nil {
			return nil, err
		}
		statement = statementHash(source, toks)
	} else {
		statement = statementHashOf(source, len(p.srcToks), func(yield func(token) bool) { liftedTokens(p.srcToks, sourceEdits, yield) })
	}
	a := &Analysis{Signature: old.Signature, Name: old.Name, CodeHash: CodeHash(code), StatementHash: statement,
		ProcRefs: old.ProcRefs, Opaque: old.Opaque, Source: source, Warnings: []Warning{}}
	params := make([]string, len(old.Parameters), len(old.Parameters)+len(examples))
	copy(params, old.Parameters)
	for name := range examples {
		if _, found := slices.BinarySearch(params, name); !found {
			params = append(params, name)
		}
	}
	slices.Sort(params)
	a.Parameters = params
	if p.lines == nil {
		p.lines = newLineIndex(p.code)
	}
	orig := p.lines
	sh := shifter{code: newLineIndex(code), edits: edits}
	for _, w := range old.Warnings {
		if w.Line > 0 {
			off := orig.offset(w.Line, w.Column)
			if sh.inside(off) {
				continue // about text lifting removed (an escape in a lifted string)
			}
			line, col := sh.pos(off)
			w = Warning{Line: line, Column: col, Message: strings.Replace(w.Message,
				fmt.Sprintf("line %d, column %d", w.Line, w.Column), fmt.Sprintf("line %d, column %d", line, col), 1)}
		}
		a.Warnings = append(a.Warnings, w)
	}
	sortWarnings(a.Warnings)
	a.Flows = make([]Flow, 0, len(old.Flows)+len(flows))
	for _, fs := range [2][]Flow{old.Flows, flows} {
		for _, f := range fs {
			f.Line, f.Column = sh.pos(orig.offset(f.Line, f.Column))
			a.Flows = append(a.Flows, f)
		}
	}
	sortFlows(a.Flows)
	return a, nil
}

// liftedTokens yields the tokens of the source edits made of the one toks
// are of, as statementHash reads them (kind, place, statement start), made
// from toks: edits are lifting's (sorted), each either a literal's tokens
// replaced by a name (and the literal's line breaks) or a top-level
// binding's statement blanked (its line breaks only), the end of its
// logical line going with it. It reports false for an edit that is not on
// whole tokens so (the source is then tokenized), or when yield does.
func liftedTokens(toks []token, edits []edit, yield func(token) bool) bool {
	delta, next := 0, 0
	blanked := false // a blanked statement's logical line has not ended yet
	for i := 0; i < len(toks); {
		t := toks[i]
		if next < len(edits) && t.End > edits[next].Off {
			e := edits[next]
			j := i
			for j < len(toks) && toks[j].Off < e.End {
				j++
			}
			if t.Off != e.Off || toks[j-1].End != e.End || toks[j-1].Kind == tokNewline || blanked {
				return false
			}
			if name := strings.TrimRight(e.Repl, "\r\n"); name != "" {
				if !yield(token{Kind: tokName, Off: e.Off + delta, End: e.Off + delta + len(name), StmtStart: t.StmtStart}) {
					return false
				}
			} else if t.StmtStart {
				blanked = true
			} else {
				return false
			}
			delta += len(e.Repl) - (e.End - e.Off)
			next++
			i = j
			continue
		}
		switch {
		case blanked && t.Kind == tokNewline:
			blanked = false
			i++
			continue
		case blanked && t.Kind != tokComment:
			return false
		}
		t.Off, t.End = t.Off+delta, t.End+delta
		if !yield(t) {
			return false
		}
		i++
	}
	return next == len(edits)
}

// shifter maps offsets of the code as written to positions of the code
// edits made of it (code, indexed).
type shifter struct {
	code  *lineIndex
	edits []edit
}

// inside reports whether off is within an edit's replaced text.
func (s shifter) inside(off int) bool {
	for _, e := range s.edits {
		if off >= e.Off && off < e.End {
			return true
		}
	}
	return false
}

// pos is the 1-based line and rune column in code of offset off of orig.
func (s shifter) pos(off int) (int, int) {
	delta := 0
	for _, e := range s.edits {
		if e.End > off {
			break
		}
		delta += len(e.Repl) - (e.End - e.Off)
	}
	return s.code.lineCol(off + delta)
}

// checkLifted is the lifted code's check: it analyses, with the same
// signature and opacity, and takes every lifted name as a parameter.
func (p *LiftPlan) checkLifted(a *Analysis, err error, examples map[string]any) string {
	if err != nil {
		return "the lifted code does not analyse (" + err.Error() + ")"
	}
	if !slices.Equal(a.Signature, p.a.Signature) || a.Opaque != p.a.Opaque {
		return "the lifted code's signature differs"
	}
	for name := range examples {
		if _, found := slices.BinarySearch(a.Parameters, name); !found {
			return "the lifted code does not take " + name + " as a parameter"
		}
	}
	return ""
}

// lineBreaks returns the line breaks in s, so that text replacing s keeps
// the lines where they were: a literal spanning lines (a triple-quoted
// string) is in a call's brackets or is a blanked binding's, where line
// breaks are free.
func lineBreaks(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if n := lineBreak(s, i); n > 0 {
			b.WriteString(s[i : i+n])
			i += n - 1
		}
	}
	return b.String()
}

// freeName is base, or base_2, base_3 … the first not in names (nor
// reserved).
func freeName(base string, names map[string]bool) string {
	if !names[base] && !reservedName(base) {
		return base
	}
	for i := 2; ; i++ {
		n := base + "_" + strconv.Itoa(i)
		if !names[n] && !reservedName(n) {
			return n
		}
	}
}

func cloneSet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
