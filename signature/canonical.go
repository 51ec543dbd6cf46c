package signature

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// The canonical program (docs/design.md "Signature, name, hash", ADR 0039):
// the analysed block printed again from its resolved syntax tree, so that
// blocks which make the same tool calls with the same arguments — given the
// same responses and parameter values, up to the order of independent
// reads — print the same. What it merges:
//
//   - comments, layout, parentheses, quote styles and literal spellings (a
//     literal is printed from its value: 'a' and "a", 0x10 and 16, 1.0 and
//     1.00; but 1 and 1.0, or True and 1, stay apart);
//   - local names, renamed v1, v2 … in the order they are first printed
//     (parameters, built-ins, tools, nested functions — str(f) shows the
//     name — and their parameters, which callers pass by name, keep
//     theirs);
//   - a top-level binding of a literal used only, and only after it, as
//     keyword arguments of tool calls, printed as the literal at its uses
//     (what lifting treats as one parameter);
//   - `elif` and `else: if`, `pass` beside other statements, a last
//     top-level `return` or `return None`;
//   - the order of a tool call's keyword arguments when none of them calls
//     anything;
//   - the order of consecutive top-level reads, `x = tools.R(k=…)` or
//     `tools.R(k=…)` with R read-only (the caller's classification) and
//     every argument a literal or a parameter, none binding a name another
//     binds: they are sorted by their call's text.
//
// Everything else keeps its place and spelling, so a difference the rules
// do not cover stays a difference.

// CanonicalVersion names the rule the canonical program is printed by; it
// is part of every canonical hash, so a hash stored under another version
// of the rule never matches one computed under this one.
const CanonicalVersion = "procgraph-canonical/1"

// verbatimMark starts what is hashed for a block printed as written (a
// node the printer does not know): no printed program starts with it.
const verbatimMark = "#verbatim\n"

// Canonical is a block's canonical program and its hash.
type Canonical struct {
	// Program is the canonical program: a Starlark block (dialect
	// starlark) that Analyze accepts, one statement per line, indented by
	// four spaces, every compound operand in parentheses.
	Program string
	// Hash is the lowercase hex sha256 of CanonicalVersion, a newline and
	// Program: two blocks with one Hash make the same tool calls with the
	// same arguments, given the same responses and parameter values, up to
	// the order of independent reads.
	Hash string
}

// AnalyzeCanonicalParams is AnalyzeCanonical with the block's parameters
// renamed too, so that two blocks that differ only in their parameters'
// names print the same: each parameter takes the keyword it is first
// passed as (tools.T(task_id=task) names task task_id, as lifting names a
// literal passed as task_id), task_id_2 … when that is taken, p when it is
// passed as no keyword; first in the order the program prints them, the
// calls reorder sorts keyed with every parameter alike. Two blocks with
// one such hash make the same tool calls with the same arguments given
// the same responses and parameter values under the renaming (params:
// each parameter's canonical name, "" for one the program never reads);
// callers that bind values to parameters by name (a proc__ call) map
// them through it.
func AnalyzeCanonicalParams(code string, dialect Dialect, readOnly func(tool string) bool) (a *Analysis, c *Canonical, params map[string]string, err error) {
	keep := &analysed{}
	a, err = analyze(code, dialect, false, keep)
	if err != nil {
		return nil, nil, nil, err
	}
	c, params = canonicalPrint(keep.file, a, readOnly, true)
	return a, c, params, nil
}

// AnalyzeCanonical is Analyze and the canonical program of the same
// analysis (the code is parsed once). readOnly is the catalogue's
// classification: whether a tool (a proc__ name too) changes no state.
// Only calls of tools it says are read-only are reordered; nil knows none,
// so nothing is reordered.
func AnalyzeCanonical(code string, dialect Dialect, readOnly func(tool string) bool) (*Analysis, *Canonical, error) {
	keep := &analysed{}
	a, err := analyze(code, dialect, false, keep)
	if err != nil {
		return nil, nil, err
	}
	return a, canonicalOf(keep.file, a, readOnly), nil
}

// CanonicalHash is the hash of a canonical program (Canonical.Hash).
func CanonicalHash(program string) string {
	h := sha256.New()
	h.Write([]byte(CanonicalVersion + "\n"))
	h.Write([]byte(program))
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalOf prints the canonical program of a resolved block (as
// blocksyntax.Parse wraps it) whose analysis is a. An opaque block is not
// reordered. Should the tree hold a node the printer does not know, the
// program is the source itself, hashed apart from every printed program.
func canonicalOf(f *syntax.File, a *Analysis, readOnly func(string) bool) *Canonical {
	c, _ := canonicalPrint(f, a, readOnly, false)
	return c
}

// canonicalPrint is canonicalOf, with the parameters renamed when
// renameParams (AnalyzeCanonicalParams: params are their names).
func canonicalPrint(f *syntax.File, a *Analysis, readOnly func(string) bool, renameParams bool) (*Canonical, map[string]string) {
	source := a.Source
	body := f.Stmts[0].(*syntax.DefStmt).Body
	c := &canonPrinter{buf: make([]byte, 0, len(CanonicalVersion)+64+2*len(source))}
	c.names = c.firstNames[:0]
	if renameParams && len(a.Parameters) > 0 {
		c.paramNames = map[string]string{}
	}
	for _, p := range a.Parameters {
		if isVName(p) && !renameParams { // a renamed parameter is never printed as it is
			c.reserve(p)
		}
	}
	c.prewalk(body, strings.Contains(source, "def") || strings.Contains(source, "lambda"))
	stmts := c.topLevel(body)
	if !a.Opaque && readOnly != nil {
		c.readOnly = readOnly
		stmts = c.reorder(stmts, readOnly)
	}
	// After the reads' order: x = R(…) sorted next to its return folds.
	stmts = c.foldReturn(stmts)
	// c.buf holds the reads' calls' text (reorder, gatherOrder) first,
	// then what is hashed: the version and the program.
	start := len(c.buf)
	c.str(CanonicalVersion + "\n")
	c.stmts(stmts, 0)
	var params map[string]string
	if renameParams {
		params = map[string]string{}
	}
	if c.unknown {
		for _, p := range a.Parameters {
			if params != nil {
				params[p] = p // printed as written: every parameter keeps its name
			}
		}
		return &Canonical{Program: source, Hash: CanonicalHash(verbatimMark + source)}, params
	}
	sum := sha256.Sum256(c.buf[start:])
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	for _, p := range a.Parameters {
		if params != nil {
			params[p] = c.paramNames[p] // "": a parameter the program never reads
		}
	}
	return &Canonical{Program: string(c.buf[start+len(CanonicalVersion)+1:]), Hash: string(hexSum[:])}, params
}

// canonPrinter prints a canonical program.
type canonPrinter struct {
	buf []byte
	// unknown: the tree holds a node the printer does not know.
	unknown bool
	// names are the local names given so far, by binding (its First);
	// few, so a slice.
	names      []canonName
	firstNames [16]canonName
	next       int
	// readOnly is the classification when reads may be reordered, else nil.
	readOnly func(string) bool
	// printed are, when reorder moved reads, the text of each top-level
	// statement's call in buf (a read's), else empty: printed once.
	printed [][2]int
	// kept are the bindings printed under their own name: nested
	// functions (str shows their name) and the parameters of functions
	// and lambdas, which callers may pass by keyword.
	kept map[*syntax.Ident]bool
	// reserved are the names v1, v2 … printed as written (parameters,
	// built-ins, kept bindings): no local is renamed to one.
	reserved map[string]bool
	// inline maps an inlined binding to its literal.
	inline map[*syntax.Ident]syntax.Expr
	// cands are the top-level literal bindings prewalk checks for
	// inlining.
	cands map[*syntax.Ident]*inlineCandidate
	// paramNames, when the parameters are renamed
	// (AnalyzeCanonicalParams), maps each parameter printed so far to its
	// canonical name; given are those names.
	paramNames map[string]string
	given      map[string]bool
	// keptNames are the names of kept bindings (no parameter is renamed
	// to one); hint is the keyword whose value is being printed; keying:
	// a read's call is printed as a sort key, every parameter as "?".
	keptNames map[string]bool
	hint      string
	keying    bool
}

// canonName is a local's canonical name.
type canonName struct {
	first *syntax.Ident
	name  string
}

// vNames are the first canonical names.
var vNames = func() []string {
	out := make([]string, 64)
	for i := range out {
		out[i] = "v" + strconv.Itoa(i+1)
	}
	return out
}()

// inlineCandidate is a top-level binding name = literal, which is inlined
// when uses > 0 and ok: its every other reference is a tool call's
// keyword argument after its statement.
type inlineCandidate struct {
	as   *syntax.AssignStmt
	end  syntax.Position
	uses int
	ok   bool
}

// localBinding returns the First of id's binding when it is a local of
// the block (or of a function nested in it), else nil.
func localBinding(id *syntax.Ident) *syntax.Ident {
	b, _ := id.Binding.(*resolve.Binding)
	if b == nil || b.First == nil {
		return nil
	}
	switch b.Scope {
	case resolve.Local, resolve.Cell, resolve.Free:
		return b.First
	}
	return nil
}

// isVName reports whether name has the shape of a canonical local name.
func isVName(name string) bool {
	if len(name) < 2 || name[0] != 'v' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	return true
}

// prewalk records the bindings that keep their name, the names v1, v2 …
// they keep, and which top-level literal bindings are inlined (c.inline).
// It walks the tree only when there are candidates to inline or functions
// (maybeFunctions: the source may define one; parameters are reserved by
// the caller).
func (c *canonPrinter) prewalk(body []syntax.Stmt, maybeFunctions bool) {
	for _, s := range body {
		as, ok := s.(*syntax.AssignStmt)
		if !ok || as.Op != syntax.EQ || !isCanonLiteral(as.RHS) {
			continue
		}
		id, ok := as.LHS.(*syntax.Ident)
		if !ok {
			continue
		}
		if b, _ := id.Binding.(*resolve.Binding); b == nil || b.Scope != resolve.Local || b.First != id {
			continue
		}
		if c.cands == nil {
			c.cands = map[*syntax.Ident]*inlineCandidate{}
		}
		_, end := as.Span()
		c.cands[id] = &inlineCandidate{as: as, end: end, ok: true}
	}
	if c.cands == nil && !maybeFunctions {
		return
	}
	keepParams := func(params []syntax.Expr) {
		for _, p := range params {
			switch p := p.(type) {
			case *syntax.BinaryExpr:
				p2, _ := p.X.(*syntax.Ident)
				c.keep(p2)
			case *syntax.UnaryExpr:
				p2, _ := p.X.(*syntax.Ident)
				c.keep(p2)
			case *syntax.Ident:
				c.keep(p)
			}
		}
	}
	var visit func(n syntax.Node) bool
	visit = func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DefStmt:
			c.keep(n.Name) // str(f) shows it
			keepParams(n.Params)
		case *syntax.LambdaExpr:
			keepParams(n.Params)
		case *syntax.CallExpr:
			if c.cands == nil || !isToolCall(n) {
				return true
			}
			syntax.Walk(n.Fn, visit)
			for _, arg := range n.Args {
				if kw, ok := arg.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
					if id, ok := kw.Y.(*syntax.Ident); ok {
						if cand := c.cands[localBinding(id)]; cand != nil {
							cand.uses++
							cand.ok = cand.ok && !before(id.NamePos, cand.end)
							continue
						}
					}
				}
				syntax.Walk(arg, visit)
			}
			return false
		case *syntax.DotExpr:
			syntax.Walk(n.X, visit)
			return false // the attribute's name is no variable
		case *syntax.Ident:
			first := localBinding(n)
			if cand := c.cands[first]; cand != nil && n != first {
				cand.ok = false // another binding, or a use outside tool arguments
			}
		}
		return true
	}
	for _, s := range body {
		syntax.Walk(s, visit)
	}
	for id, cand := range c.cands {
		if cand.ok && cand.uses > 0 {
			if c.inline == nil {
				c.inline = map[*syntax.Ident]syntax.Expr{}
			}
			c.inline[id] = cand.as.RHS
		}
	}
}

func (c *canonPrinter) reserve(name string) {
	if c.reserved == nil {
		c.reserved = map[string]bool{}
	}
	c.reserved[name] = true
}

func (c *canonPrinter) keep(id *syntax.Ident) {
	if id == nil {
		return
	}
	if first := localBinding(id); first != nil {
		if c.kept == nil {
			c.kept = map[*syntax.Ident]bool{}
		}
		c.kept[first] = true
	}
	if isVName(id.Name) {
		c.reserve(id.Name)
	}
	if c.keptNames == nil {
		c.keptNames = map[string]bool{}
	}
	c.keptNames[id.Name] = true
}

// isToolCall reports whether call is tools.N(...) on the predeclared tools.
func isToolCall(call *syntax.CallExpr) bool {
	dot, ok := call.Fn.(*syntax.DotExpr)
	return ok && isPredeclaredTools(dot.X)
}

// universal reports whether id is the built-in name (True, False, None).
func universal(id *syntax.Ident, name string) bool {
	b, _ := id.Binding.(*resolve.Binding)
	return id.Name == name && b != nil && (b.Scope == resolve.Universal || b.Scope == resolve.Predeclared) && starlark.Universe.Has(name)
}

// isCanonLiteral reports whether e is a literal that may be printed in
// place of a name bound to it: a number, string or bytes literal, a minus
// and a number, True, False or None.
func isCanonLiteral(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Literal:
		return true
	case *syntax.UnaryExpr:
		l, ok := e.X.(*syntax.Literal)
		return ok && e.Op == syntax.MINUS && (l.Token == syntax.INT || l.Token == syntax.FLOAT)
	case *syntax.Ident:
		return universal(e, "True") || universal(e, "False") || universal(e, "None")
	}
	return false
}

// topLevel returns the block's statements without the inlined bindings
// (c.inline): a top-level name = literal whose name is a local of the
// block (no nested function sees it), bound there only, and otherwise used
// only as tool calls' keyword arguments after it.
func (c *canonPrinter) topLevel(body []syntax.Stmt) []syntax.Stmt {
	if c.inline == nil {
		return body
	}
	out := make([]syntax.Stmt, 0, len(body))
	for _, s := range body {
		if as, ok := s.(*syntax.AssignStmt); ok {
			if id, ok := as.LHS.(*syntax.Ident); ok && c.inline[id] != nil {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// foldReturn returns stmts with a last `x = E` then `return x` printed as
// `return E`, again while one folds (a copy when it folds: the tree is not
// changed): x a local of the block bound there only and read by that
// return only, so the two statements are one.
func (c *canonPrinter) foldReturn(stmts []syntax.Stmt) []syntax.Stmt {
	for {
		folded := c.foldReturnOnce(stmts)
		if len(folded) == len(stmts) {
			return stmts
		}
		stmts = folded
	}
}

// foldReturnOnce is one step of foldReturn.
func (c *canonPrinter) foldReturnOnce(stmts []syntax.Stmt) []syntax.Stmt {
	n := len(stmts)
	if n < 2 {
		return stmts
	}
	ret, ok := stmts[n-1].(*syntax.ReturnStmt)
	if !ok || ret.Result == nil {
		return stmts
	}
	id, ok := unparen(ret.Result).(*syntax.Ident)
	if !ok {
		return stmts
	}
	as, ok := stmts[n-2].(*syntax.AssignStmt)
	if !ok || as.Op != syntax.EQ {
		return stmts
	}
	lhs, ok := as.LHS.(*syntax.Ident)
	first := localBinding(id)
	if !ok || first == nil || first != lhs || c.kept[first] || c.inline[first] != nil {
		return stmts
	}
	refs := 0
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			if id, ok := n.(*syntax.Ident); ok && localBinding(id) == first {
				refs++
			}
			return true
		})
	}
	if refs != 2 {
		return stmts // bound or read elsewhere too
	}
	out := slices.Clone(stmts[:n-2])
	if c.printed != nil {
		// The folded return is printed afresh, not as the read's call.
		c.printed = append(c.printed[:n-2:n-2], [2]int{})
	}
	return append(out, &syntax.ReturnStmt{Return: ret.Return, Result: as.RHS})
}

func before(p, q syntax.Position) bool {
	return p.Line < q.Line || p.Line == q.Line && p.Col < q.Col
}

// readStmt is a top-level statement that reorder may move: a read's call
// and the binding it assigns (nil for an expression statement).
type readStmt struct {
	call *syntax.CallExpr
	lhs  *syntax.Ident
}

// asRead returns s as a read: x = tools.R(k=atom, …) or tools.R(k=atom, …)
// where R is read-only, x a local of the block and every argument a
// keyword argument whose value is a JSON literal or a parameter.
func (c *canonPrinter) asRead(s syntax.Stmt, readOnly func(string) bool) (readStmt, bool) {
	var e syntax.Expr
	var lhs *syntax.Ident
	switch s := s.(type) {
	case *syntax.ExprStmt:
		e = s.X
	case *syntax.AssignStmt:
		id, ok := s.LHS.(*syntax.Ident)
		if !ok || s.Op != syntax.EQ {
			return readStmt{}, false
		}
		b, _ := id.Binding.(*resolve.Binding)
		if b == nil || b.Scope != resolve.Local || c.inline[b.First] != nil {
			return readStmt{}, false
		}
		e, lhs = s.RHS, b.First
	default:
		return readStmt{}, false
	}
	e = unparen(e)
	call, ok := e.(*syntax.CallExpr)
	if !ok || !isToolCall(call) || !readOnly(call.Fn.(*syntax.DotExpr).Name.Name) {
		return readStmt{}, false
	}
	for _, arg := range call.Args {
		kw, ok := arg.(*syntax.BinaryExpr)
		if !ok || kw.Op != syntax.EQ || !c.jsonAtom(unparen(kw.Y)) {
			return readStmt{}, false
		}
	}
	return readStmt{call: call, lhs: lhs}, true
}

// jsonAtom reports whether e is a value a tool argument always takes
// without an error: a literal string of valid UTF-8, a 64-bit integer, a
// finite float, True, False, None, an inlined literal of these, or a
// parameter (bound from JSON).
func (c *canonPrinter) jsonAtom(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Literal:
		switch v := e.Value.(type) {
		case string:
			return e.Token == syntax.STRING && utf8.ValidString(v)
		case int64:
			return true
		case float64:
			return !math.IsInf(v, 0) && !math.IsNaN(v)
		}
		return false
	case *syntax.UnaryExpr:
		return e.Op == syntax.MINUS && c.jsonAtom(e.X) && isCanonLiteral(e)
	case *syntax.Ident:
		if first := localBinding(e); first != nil {
			lit := c.inline[first]
			return lit != nil && c.jsonAtom(lit)
		}
		b, _ := e.Binding.(*resolve.Binding)
		if b == nil {
			return false
		}
		if isCanonLiteral(e) {
			return true
		}
		return b.Scope == resolve.Predeclared && e.Name != toolsName && !starlark.Universe.Has(e.Name)
	}
	return false
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// reorder returns stmts with every run of consecutive reads sorted by
// their call's text, stably (a copy when it moves any: the tree is not
// changed). Each statement gets a group: reads of one run
// share one, and a statement that is not a read has a group of its own,
// so nothing moves across it; a read that binds a name another read of
// its run binds starts a new run.
func (c *canonPrinter) reorder(stmts []syntax.Stmt, readOnly func(string) bool) []syntax.Stmt {
	type ordered struct {
		group    int
		from, to int // the call's text in c.buf
		s        syntax.Stmt
	}
	var order []ordered
	var bound []*syntax.Ident // the names the run binds
	group, reads := 0, 0
	for i, s := range stmts {
		r, ok := c.asRead(s, readOnly)
		if !ok {
			if order != nil {
				order[i] = ordered{group + 1, 0, 0, s}
			}
			group += 2
			bound = bound[:0]
			continue
		}
		if order == nil {
			order = make([]ordered, len(stmts))
			for j := range i {
				order[j] = ordered{-1, 0, 0, stmts[j]}
			}
		}
		if r.lhs != nil && slices.Contains(bound, r.lhs) {
			group += 2
			bound = bound[:0]
		}
		if r.lhs != nil {
			bound = append(bound, r.lhs)
		}
		reads++
		from, to := c.callKey(r.call)
		order[i] = ordered{group, from, to, s}
	}
	if reads < 2 {
		return stmts
	}
	slices.SortStableFunc(order, func(a, b ordered) int {
		return cmp.Or(cmp.Compare(a.group, b.group), bytes.Compare(c.buf[a.from:a.to], c.buf[b.from:b.to]))
	})
	out := make([]syntax.Stmt, len(order))
	c.printed = make([][2]int, len(order))
	for i, o := range order {
		out[i] = o.s
		c.printed[i] = [2]int{o.from, o.to}
	}
	return out
}

// callKey appends the text of a read's call to c.buf and returns where
// it is (its arguments are literals and parameters, so printing it names
// no local).
func (c *canonPrinter) callKey(call *syntax.CallExpr) (int, int) {
	from := len(c.buf)
	c.keying = true
	c.expr(call)
	c.keying = false
	return from, len(c.buf)
}

// stmts prints a statement list at depth, without the pass statements
// beside others (a list of none prints pass).
func (c *canonPrinter) stmts(stmts []syntax.Stmt, depth int) {
	n := 0
	for i, s := range stmts {
		if b, ok := s.(*syntax.BranchStmt); ok && b.Token == syntax.PASS {
			continue
		}
		if depth == 0 && c.isLastReturnNone(stmts, s) {
			continue
		}
		n++
		if depth == 0 && c.printed != nil && c.printed[i][1] > 0 && c.paramNames == nil {
			// A read whose call reorder printed already: the same text.
			if as, ok := s.(*syntax.AssignStmt); ok {
				c.expr(as.LHS)
				c.str(" = ")
			}
			c.buf = append(c.buf, c.buf[c.printed[i][0]:c.printed[i][1]]...)
			c.str("\n")
			continue
		}
		c.stmt(s, depth)
	}
	if n == 0 && depth > 0 {
		c.line(depth)
		c.str("pass\n")
	}
}

// isLastReturnNone reports whether s is the last statement of the block
// (pass statements aside) and a return of None, which falling off the end
// also returns.
func (c *canonPrinter) isLastReturnNone(stmts []syntax.Stmt, s syntax.Stmt) bool {
	r, ok := s.(*syntax.ReturnStmt)
	if !ok {
		return false
	}
	if r.Result != nil {
		id, ok := unparen(r.Result).(*syntax.Ident)
		if !ok || !universal(id, "None") {
			return false
		}
	}
	for i := len(stmts) - 1; i >= 0; i-- {
		if b, ok := stmts[i].(*syntax.BranchStmt); ok && b.Token == syntax.PASS {
			continue
		}
		return stmts[i] == s
	}
	return false
}

func (c *canonPrinter) str(s string) { c.buf = append(c.buf, s...) }

func (c *canonPrinter) line(depth int) {
	for range depth {
		c.str("    ")
	}
}

func (c *canonPrinter) stmt(s syntax.Stmt, depth int) {
	c.line(depth)
	switch s := s.(type) {
	case *syntax.AssignStmt:
		if perm := c.gatherOrder(s); perm != nil {
			c.gather(s, perm)
			break
		}
		c.expr(s.LHS)
		c.str(" ")
		c.str(s.Op.String())
		c.str(" ")
		c.expr(s.RHS)
	case *syntax.ExprStmt:
		c.expr(s.X)
	case *syntax.BranchStmt:
		c.str(s.Token.String())
	case *syntax.ReturnStmt:
		c.str("return")
		if s.Result != nil {
			c.str(" ")
			c.expr(s.Result)
		}
	case *syntax.IfStmt:
		c.str("if ")
		for {
			c.expr(s.Cond)
			c.str(":\n")
			c.stmts(s.True, depth+1)
			if len(s.False) == 1 {
				if elif, ok := s.False[0].(*syntax.IfStmt); ok {
					c.line(depth)
					c.str("elif ")
					s = elif
					continue
				}
			}
			break
		}
		if len(s.False) > 0 {
			c.line(depth)
			c.str("else:\n")
			c.stmts(s.False, depth+1)
		}
		return
	case *syntax.ForStmt:
		c.str("for ")
		c.expr(s.Vars)
		c.str(" in ")
		c.expr(s.X)
		c.str(":\n")
		c.stmts(s.Body, depth+1)
		return
	case *syntax.WhileStmt:
		c.str("while ")
		c.expr(s.Cond)
		c.str(":\n")
		c.stmts(s.Body, depth+1)
		return
	case *syntax.DefStmt:
		c.str("def ")
		c.ident(s.Name)
		c.str("(")
		c.params(s.Params)
		c.str("):\n")
		c.stmts(s.Body, depth+1)
		return
	default: // load statements are refused by the analysis
		c.unknown = true
	}
	c.str("\n")
}

// gatherOrder returns the order to print the targets and calls of a
// gathered read in, or nil: s is `x, y = [tools.R(…), tools.S(…)]` (what
// asyncio.gather becomes) with distinct locals as targets and as many
// reads (as reorder sees them) as targets; the pairs are sorted by their
// call's text, so each target still gets its call's result. It applies at
// any depth: the calls are one statement's, made one after the other.
func (c *canonPrinter) gatherOrder(s *syntax.AssignStmt) []int {
	if c.readOnly == nil || s.Op != syntax.EQ {
		return nil
	}
	targets, calls := exprList(unparen(s.LHS)), exprList(unparen(s.RHS))
	if len(targets) < 2 || len(targets) != len(calls) {
		return nil
	}
	firsts := make([]*syntax.Ident, len(targets))
	for i, t := range targets {
		id, ok := unparen(t).(*syntax.Ident)
		if !ok {
			return nil
		}
		b, _ := id.Binding.(*resolve.Binding)
		if b == nil || b.Scope != resolve.Local || slices.Contains(firsts, b.First) {
			return nil
		}
		firsts[i] = b.First
	}
	type keyed struct{ i, from, to int }
	keys := make([]keyed, len(calls))
	mark := len(c.buf) // the calls' text is printed past the program, then dropped
	defer func() { c.buf = c.buf[:mark] }()
	for i, e := range calls {
		r, ok := c.asRead(&syntax.ExprStmt{X: e}, c.readOnly)
		if !ok {
			return nil
		}
		from, to := c.callKey(r.call)
		keys[i] = keyed{i, from, to}
	}
	slices.SortStableFunc(keys, func(a, b keyed) int { return bytes.Compare(c.buf[a.from:a.to], c.buf[b.from:b.to]) })
	perm := make([]int, len(keys))
	for i, k := range keys {
		perm[i] = k.i
	}
	return perm
}

// exprList returns the elements of a tuple or list expression, else nil.
func exprList(e syntax.Expr) []syntax.Expr {
	switch e := e.(type) {
	case *syntax.TupleExpr:
		return e.List
	case *syntax.ListExpr:
		return e.List
	}
	return nil
}

// gather prints a gathered read with its targets and calls in perm's
// order (gatherOrder), each side keeping its brackets.
func (c *canonPrinter) gather(s *syntax.AssignStmt, perm []int) {
	side := func(e syntax.Expr) {
		e = unparen(e)
		open, close := "(", ")"
		if _, ok := e.(*syntax.ListExpr); ok {
			open, close = "[", "]"
		}
		xs := exprList(e)
		c.str(open)
		for i, j := range perm {
			if i > 0 {
				c.str(", ")
			}
			c.expr(xs[j])
		}
		c.str(close)
	}
	side(s.LHS)
	c.str(" = ")
	side(s.RHS)
}

func (c *canonPrinter) params(params []syntax.Expr) {
	for i, p := range params {
		if i > 0 {
			c.str(", ")
		}
		c.arg(p)
	}
}

// arg prints a call's argument or a function's parameter: k=v, *x, **x,
// a bare * or an expression.
func (c *canonPrinter) arg(e syntax.Expr) {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		if e.Op == syntax.EQ {
			c.expr(e.X)
			c.str("=")
			if k, ok := e.X.(*syntax.Ident); ok {
				if _, ok := unparen(e.Y).(*syntax.Ident); ok {
					c.hint = k.Name
				}
			}
			c.expr(e.Y)
			c.hint = ""
			return
		}
	case *syntax.UnaryExpr:
		if e.Op == syntax.STAR || e.Op == syntax.STARSTAR {
			c.str(e.Op.String())
			if e.X != nil {
				c.expr(e.X)
			}
			return
		}
	}
	c.expr(e)
}

// ident prints a name: a local's canonical name, an inlined binding's
// literal, any other name as written.
func (c *canonPrinter) ident(id *syntax.Ident) {
	first := localBinding(id)
	if first == nil && c.paramNames != nil && isParameter(id) {
		c.param(id.Name)
		return
	}
	c.hint = ""
	if first == nil || c.kept[first] {
		c.str(id.Name)
		return
	}
	if lit := c.inline[first]; lit != nil {
		c.expr(lit)
		return
	}
	for _, n := range c.names {
		if n.first == first {
			c.str(n.name)
			return
		}
	}
	for {
		c.next++
		name := "v" + strconv.Itoa(c.next)
		if c.next <= len(vNames) {
			name = vNames[c.next-1]
		}
		if !c.reserved[name] {
			c.names = append(c.names, canonName{first, name})
			c.str(name)
			return
		}
	}
}

// isParameter reports whether id is one of the block's parameters: a
// predeclared name other than tools and the built-ins.
func isParameter(id *syntax.Ident) bool {
	b, _ := id.Binding.(*resolve.Binding)
	return b != nil && b.Scope == resolve.Predeclared && id.Name != toolsName && !starlark.Universe.Has(id.Name)
}

// param prints parameter name by its canonical name, giving it one when
// it is printed first: the keyword it is passed as (c.hint), else p;
// with _2, _3 … when that is given, reserved, kept or a local's shape.
// A sort key (keying) prints every parameter as "?", giving none.
func (c *canonPrinter) param(name string) {
	if c.keying {
		c.str("?")
		return
	}
	if n, ok := c.paramNames[name]; ok {
		c.str(n)
		return
	}
	base := c.hint
	if base == "" {
		base = "p"
	}
	if c.given == nil {
		c.given = map[string]bool{}
	}
	n := base
	for i := 2; c.given[n] || c.keptNames[n] || reservedName(n) || isVName(n); i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	c.given[n] = true
	c.paramNames[name] = n
	c.str(n)
}

// operand prints e as an operand: in parentheses unless it is atomic.
func (c *canonPrinter) operand(e syntax.Expr) {
	e = unparen(e)
	switch e.(type) {
	case *syntax.BinaryExpr, *syntax.UnaryExpr, *syntax.CondExpr, *syntax.LambdaExpr:
		c.str("(")
		c.expr(e)
		c.str(")")
	default:
		c.expr(e)
	}
}

func (c *canonPrinter) list(xs []syntax.Expr) {
	for i, x := range xs {
		if i > 0 {
			c.str(", ")
		}
		c.expr(x)
	}
}

func (c *canonPrinter) expr(e syntax.Expr) {
	switch e := unparen(e).(type) {
	case *syntax.Ident:
		c.ident(e)
	case *syntax.Literal:
		c.literal(e)
	case *syntax.TupleExpr:
		c.str("(")
		c.list(e.List)
		if len(e.List) == 1 {
			c.str(",")
		}
		c.str(")")
	case *syntax.ListExpr:
		c.str("[")
		c.list(e.List)
		c.str("]")
	case *syntax.DictExpr:
		c.str("{")
		c.list(e.List)
		c.str("}")
	case *syntax.DictEntry:
		c.expr(e.Key)
		c.str(": ")
		c.expr(e.Value)
	case *syntax.CallExpr:
		c.operand(e.Fn)
		c.str("(")
		args := e.Args
		if byKeyword := func(a, b syntax.Expr) int {
			return cmp.Compare(a.(*syntax.BinaryExpr).X.(*syntax.Ident).Name, b.(*syntax.BinaryExpr).X.(*syntax.Ident).Name)
		}; isToolCall(e) && sortableKeywords(args) && !slices.IsSortedFunc(args, byKeyword) {
			args = slices.Clone(args)
			slices.SortStableFunc(args, byKeyword)
		}
		for i, a := range args {
			if i > 0 {
				c.str(", ")
			}
			c.arg(a)
		}
		c.str(")")
	case *syntax.DotExpr:
		if l, ok := unparen(e.X).(*syntax.Literal); ok && (l.Token == syntax.INT || l.Token == syntax.FLOAT) {
			c.str("(") // 0.x would read as a float
			c.literal(l)
			c.str(")")
		} else {
			c.operand(e.X)
		}
		c.str(".")
		c.str(e.Name.Name)
	case *syntax.IndexExpr:
		c.operand(e.X)
		c.str("[")
		c.expr(e.Y)
		c.str("]")
	case *syntax.SliceExpr:
		c.operand(e.X)
		c.str("[")
		if e.Lo != nil {
			c.expr(e.Lo)
		}
		c.str(":")
		if e.Hi != nil {
			c.expr(e.Hi)
		}
		if e.Step != nil {
			c.str(":")
			c.expr(e.Step)
		}
		c.str("]")
	case *syntax.UnaryExpr:
		switch e.Op {
		case syntax.NOT:
			c.str("not ")
		case syntax.STAR, syntax.STARSTAR:
			c.arg(e)
			return
		default:
			c.str(e.Op.String())
		}
		c.operand(e.X)
	case *syntax.BinaryExpr:
		if e.Op == syntax.EQ {
			c.arg(e)
			return
		}
		c.operand(e.X)
		c.str(" ")
		c.str(e.Op.String())
		c.str(" ")
		c.operand(e.Y)
	case *syntax.CondExpr:
		c.operand(e.True)
		c.str(" if ")
		c.operand(e.Cond)
		c.str(" else ")
		c.operand(e.False)
	case *syntax.LambdaExpr:
		c.str("lambda")
		if len(e.Params) > 0 {
			c.str(" ")
			c.params(e.Params)
		}
		c.str(": ")
		c.expr(e.Body)
	case *syntax.Comprehension:
		open, close := "[", "]"
		if e.Curly {
			open, close = "{", "}"
		}
		c.str(open)
		c.expr(e.Body)
		for _, cl := range e.Clauses {
			switch cl := cl.(type) {
			case *syntax.ForClause:
				c.str(" for ")
				c.expr(cl.Vars)
				c.str(" in ")
				c.operand(cl.X)
			case *syntax.IfClause:
				c.str(" if ")
				c.operand(cl.Cond)
			}
		}
		c.str(close)
	default:
		c.unknown = true
	}
}

// sortableKeywords reports whether a tool call's arguments are all
// keyword arguments none of which calls anything, so their order changes
// nothing: the tool takes them as one JSON object.
func sortableKeywords(args []syntax.Expr) bool {
	for _, a := range args {
		kw, ok := a.(*syntax.BinaryExpr)
		if !ok || kw.Op != syntax.EQ {
			return false
		}
		if _, ok := kw.X.(*syntax.Ident); !ok {
			return false
		}
		calls := false
		syntax.Walk(kw.Y, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.CallExpr, *syntax.LambdaExpr, *syntax.Comprehension:
				calls = true
			}
			return !calls
		})
		if calls {
			return false
		}
	}
	return true
}

// literal prints a literal from its value: a string of valid UTF-8 in
// double quotes with Starlark's escapes, bytes likewise, an integer in
// decimal, a float in Go's shortest form (always with a point or an
// exponent); anything else as written.
func (c *canonPrinter) literal(l *syntax.Literal) {
	switch v := l.Value.(type) {
	case string:
		if l.Token == syntax.BYTES {
			c.str(syntax.Quote(v, true))
			return
		}
		if plainString(v) {
			c.str(`"`)
			c.str(v)
			c.str(`"`)
			return
		}
		if utf8.ValidString(v) {
			c.str(syntax.Quote(v, false))
			return
		}
	case int64:
		c.str(strconv.FormatInt(v, 10))
		return
	case *big.Int:
		c.str(v.String())
		return
	case float64:
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			s := strconv.FormatFloat(v, 'g', -1, 64)
			if !strings.ContainsAny(s, ".e") {
				s += ".0"
			}
			c.str(s)
			return
		}
	}
	c.str(l.Raw)
}

// plainString reports whether s is printable ASCII without a quote or a
// backslash: what syntax.Quote writes as it is, between double quotes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
