package signature

// keywordFeatures maps Python keywords that Starlark lacks to the feature
// name reported and a description.
var keywordFeatures = map[string][2]string{
	"import":   {"import", "import statements are not supported (Starlark has no modules; tools are reached through tools.NAME)"},
	"from":     {"import", "from ... import is not supported (Starlark has no modules; tools are reached through tools.NAME)"},
	"class":    {"class", "class definitions are not supported in Starlark (use dicts and functions)"},
	"try":      {"try", "try statements are not supported in Starlark (a failing call fails the procedure)"},
	"except":   {"try", "except clauses are not supported in Starlark (a failing call fails the procedure)"},
	"finally":  {"try", "finally clauses are not supported in Starlark"},
	"raise":    {"raise", "raise is not supported in Starlark (use fail(\"message\"))"},
	"with":     {"with", "with statements are not supported in Starlark"},
	"yield":    {"yield", "yield (generators) is not supported in Starlark"},
	"global":   {"global", "global statements are not supported in Starlark"},
	"nonlocal": {"global", "nonlocal statements are not supported in Starlark"},
	"del":      {"del", "del statements are not supported in Starlark (use dict.pop or list.pop)"},
	"is":       {"is", "the is operator is not supported in Starlark (use == or !=)"},
	"as":       {"as", "as (aliasing in import, with or except) is not supported in Starlark"},
	"load":     {"load", "load statements are not available in procedures"},
}

// opFeatures maps operator tokens Starlark lacks to feature and description.
var opFeatures = map[string][2]string{
	":=":  {"walrus", "the walrus operator := is not supported in Starlark (assign on its own line)"},
	"->":  {"annotation", "type annotations (->) are not supported in Starlark"},
	"...": {"ellipsis", "the ellipsis ... is not supported in Starlark"},
	"@=":  {"matmul", "the @= operator is not supported in Starlark"},
	"**=": {"power", "the power operator ** is not supported in Starlark (use a loop or math.pow)"},
	"<>":  {"syntax", "the <> operator is not supported (use !=)"},
}

// starlarkPrefixes are the string prefixes go.starlark.net accepts.
var starlarkPrefixes = map[string]bool{"": true, "r": true, "b": true, "rb": true}

// checkFeatures returns an *Error for the first Python feature in toks that
// Starlark lacks, or nil. src is the code the tokens come from.
func checkFeatures(src string, toks []token, dialect Dialect) *Error {
	prev := -1 // index of the previous non-comment token
	for i, t := range toks {
		if t.Kind == tokComment {
			continue
		}
		p := prev
		prev = i
		text := t.text(src)
		switch t.Kind {
		case tokName:
			if p >= 0 && toks[p].Kind == tokOp && toks[p].text(src) == "." {
				continue // an attribute name
			}
			if f, ok := keywordFeatures[text]; ok {
				return errorAt(t.Line, t.Col, f[0], "%s", f[1])
			}
			switch text {
			case "await", "async":
				if dialect == Starlark {
					return errorAt(t.Line, t.Col, text, "%s is not supported in dialect starlark (use dialect python-async for asynchronous Python)", text)
				}
			case "assert":
				if n := nextTok(toks, i); t.StmtStart && n >= 0 && !isOp(src, toks[n], "=", "(", ".", "[", ",") {
					return errorAt(t.Line, t.Col, "assert", "assert statements are not supported in Starlark (use if ...: fail(\"message\"))")
				}
			}
		case tokString:
			if hasF(t.Prefix) {
				return errorAt(t.Line, t.Col, "f-string", "f-strings are not supported in Starlark (use \"...{}\".format(x) or %%)")
			}
			if !starlarkPrefixes[t.Prefix] {
				return errorAt(t.Line, t.Col, "string prefix", "the string prefix %q is not supported in Starlark (use r, b or rb)", t.Prefix)
			}
		case tokOp:
			if f, ok := opFeatures[text]; ok {
				return errorAt(t.Line, t.Col, f[0], "%s", f[1])
			}
			switch text {
			case "@":
				if t.StmtStart {
					return errorAt(t.Line, t.Col, "decorator", "decorators are not supported in Starlark")
				}
				return errorAt(t.Line, t.Col, "matmul", "the @ operator is not supported in Starlark")
			case "**":
				if p >= 0 && endsOperand(src, toks[p]) {
					return errorAt(t.Line, t.Col, "power", "the power operator ** is not supported in Starlark (use a loop or math.pow)")
				}
			}
		}
	}
	return nil
}

func hasF(prefix string) bool {
	for i := 0; i < len(prefix); i++ {
		if prefix[i] == 'f' || prefix[i] == 'F' {
			return true
		}
	}
	return false
}

// nextTok returns the index of the first non-comment token after i, or -1.
func nextTok(toks []token, i int) int {
	for j := i + 1; j < len(toks); j++ {
		if toks[j].Kind != tokComment {
			return j
		}
	}
	return -1
}

// isOp reports whether t is an operator token with one of the given texts.
func isOp(src string, t token, ops ...string) bool {
	if t.Kind != tokOp {
		return false
	}
	for _, o := range ops {
		if t.text(src) == o {
			return true
		}
	}
	return false
}

// endsOperand reports whether t can end an operand, so that a following **
// is the binary power operator rather than **kwargs unpacking.
func endsOperand(src string, t token) bool {
	switch t.Kind {
	case tokNumber, tokString:
		return true
	case tokName:
		switch t.text(src) {
		case "and", "or", "not", "in", "if", "else", "elif", "for", "while", "return", "lambda", "def":
			return false
		}
		return true
	case tokOp:
		return isOp(src, t, ")", "]", "}")
	}
	return false
}
