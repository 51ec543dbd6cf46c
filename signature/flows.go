package signature

import (
	"cmp"
	"slices"

	"go.starlark.net/resolve"
	"go.starlark.net/syntax"
)

// Flow is a parameter passed directly as a keyword argument of a tool call,
// tools.Tool(Keyword=Parameter): the parameter's value reaches the tool's
// input property Keyword unchanged. Only this direct form is reported; a
// parameter that is transformed, or passed positionally, has no flow.
type Flow struct {
	Parameter string
	Tool      string
	Keyword   string
	Line      int // position of the call's keyword argument, in the code as written
	Column    int
}

// callFlows returns the flows of one call expression, if it is a call
// tools.N(...): every keyword argument whose value is a bare parameter
// (a predeclared name other than tools and Starlark built-ins).
func callFlows(call *syntax.CallExpr, isParam func(string) bool, pm *posMap) []Flow {
	dot, ok := call.Fn.(*syntax.DotExpr)
	if !ok || !isPredeclaredTools(dot.X) {
		return nil
	}
	var out []Flow
	for _, arg := range call.Args {
		kw, ok := arg.(*syntax.BinaryExpr)
		if !ok || kw.Op != syntax.EQ {
			continue
		}
		key, ok := kw.X.(*syntax.Ident)
		if !ok {
			continue
		}
		val, ok := kw.Y.(*syntax.Ident)
		if !ok {
			continue
		}
		b, _ := val.Binding.(*resolve.Binding)
		if b == nil || b.Scope != resolve.Predeclared || !isParam(val.Name) {
			continue
		}
		line, col := pm.origPos(int(key.NamePos.Line), int(key.NamePos.Col))
		out = append(out, Flow{Parameter: val.Name, Tool: dot.Name.Name, Keyword: key.Name, Line: line, Column: col})
	}
	return out
}

// sortFlows orders flows by parameter, tool, keyword, then position.
func sortFlows(fs []Flow) {
	slices.SortStableFunc(fs, func(a, b Flow) int {
		return cmp.Or(cmp.Compare(a.Parameter, b.Parameter), cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(a.Keyword, b.Keyword), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}
