package signature

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBracketDepth bounds bracket nesting in the tokenizer, which keeps the
// python-async rewrite linear on hostile input. The Starlark parser's own
// recursion limit is lower (about 75 nested brackets; it rejects deeper code
// as "excessive nesting", reported with the same feature "nesting"), so this
// limit never decides whether code is accepted.
const MaxBracketDepth = 100

type tokKind uint8

const (
	tokName tokKind = iota
	tokNumber
	tokString
	tokOp
	tokComment
	tokNewline // end of a logical line
)

// token is a lexical token of Python-like source. Off and End are byte
// offsets; Line and Col are 1-based, Col counting runes.
type token struct {
	Kind      tokKind
	Off, End  int
	Line, Col int
	StmtStart bool // first token of a logical line
	Prefix    string
}

// text returns the token's source text.
func (t token) text(src string) string { return src[t.Off:t.End] }

// tokenizer splits source into tokens the way Python does, closely enough to
// know where strings, comments, brackets and logical lines are.
type tokenizer struct {
	src     string
	pos     int
	line    int
	lineOff int // byte offset of the current line's start
	colOff  int // a byte offset on the current line whose column is known
	col     int // column of colOff
	depth   int
	toks    []token
	atStmt  bool
}

// tokenize returns the tokens of src (comments included, whitespace and
// non-logical newlines excluded). On a lexical error it returns the tokens
// before it and the error.
func tokenize(src string) ([]token, *Error) {
	t := &tokenizer{src: src, line: 1, col: 1, atStmt: true}
	t.toks = make([]token, 0, len(src)/4+1)
	err := t.run()
	return t.toks, err
}

// colAt returns the 1-based rune column of byte offset off on the current
// line (off must not be before colOff).
func (t *tokenizer) colAt(off int) int {
	if off < t.colOff {
		t.colOff, t.col = t.lineOff, 1
	}
	t.col += utf8.RuneCountInString(t.src[t.colOff:off])
	t.colOff = off
	return t.col
}

// newline records a line break ending at offset end.
func (t *tokenizer) newline(end int) {
	t.line++
	t.lineOff, t.colOff, t.col = end, end, 1
}

// lineBreak returns the length of the line break at i (\n, \r\n or \r), or 0.
func lineBreak(s string, i int) int {
	switch s[i] {
	case '\n':
		return 1
	case '\r':
		if i+1 < len(s) && s[i+1] == '\n' {
			return 2
		}
		return 1
	}
	return 0
}

func (t *tokenizer) emit(kind tokKind, start, line, col int, prefix string) {
	t.toks = append(t.toks, token{Kind: kind, Off: start, End: t.pos, Line: line, Col: col,
		StmtStart: t.atStmt && kind != tokComment, Prefix: prefix})
	if kind != tokComment {
		t.atStmt = false
	}
}

func (t *tokenizer) run() *Error {
	s := t.src
	for t.pos < len(s) {
		c := s[t.pos]
		if n := lineBreak(s, t.pos); n > 0 {
			if t.depth == 0 && !t.atStmt {
				line, col := t.line, t.colAt(t.pos)
				t.pos += n
				t.emit(tokNewline, t.pos-n, line, col, "")
				t.atStmt = true
			} else {
				t.pos += n
			}
			t.newline(t.pos)
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			t.pos++
		case c == '\\':
			if t.pos+1 < len(s) && lineBreak(s, t.pos+1) > 0 {
				t.pos += 1 + lineBreak(s, t.pos+1)
				t.newline(t.pos)
			} else {
				t.op(1)
			}
		case c == '#':
			start, col := t.pos, t.colAt(t.pos)
			for t.pos < len(s) && s[t.pos] != '\n' && s[t.pos] != '\r' {
				t.pos++
			}
			t.emit(tokComment, start, t.line, col, "")
		case c == '"' || c == '\'':
			if err := t.str(t.pos, t.pos, ""); err != nil {
				return err
			}
		case c >= '0' && c <= '9' || c == '.' && t.pos+1 < len(s) && s[t.pos+1] >= '0' && s[t.pos+1] <= '9':
			t.number()
		case isIdentStart(s, t.pos):
			start := t.pos
			for t.pos < len(s) && isIdentPart(s, t.pos) {
				_, n := utf8.DecodeRuneInString(s[t.pos:])
				t.pos += n
			}
			if t.pos < len(s) && (s[t.pos] == '"' || s[t.pos] == '\'') && isStringPrefix(s[start:t.pos]) {
				if err := t.str(start, t.pos, s[start:t.pos]); err != nil {
					return err
				}
				continue
			}
			t.emit(tokName, start, t.line, t.colAt(start), "")
		default:
			if err := t.operator(); err != nil {
				return err
			}
		}
	}
	return nil
}

func isIdentStart(s string, i int) bool {
	c := s[i]
	if c < utf8.RuneSelf {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

func isIdentPart(s string, i int) bool {
	c := s[i]
	if c < utf8.RuneSelf {
		return isNameByte(c)
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isStringPrefix reports whether p is a Python string prefix (r, b, u, f and
// their valid combinations, any case).
func isStringPrefix(p string) bool {
	switch strings.ToLower(p) {
	case "r", "b", "u", "f", "rb", "br", "fr", "rf":
		return true
	}
	return false
}

// str scans a string literal whose prefix starts at start and whose opening
// quote is at q.
func (t *tokenizer) str(start, q int, prefix string) *Error {
	s := t.src
	line, col := t.line, t.colAt(start)
	quote := s[q]
	triple := q+2 < len(s) && s[q+1] == quote && s[q+2] == quote
	i := q + 1
	if triple {
		i = q + 3
	}
	for {
		if i >= len(s) {
			t.pos = i
			if triple {
				return errorAt(line, col, "syntax", "unterminated triple-quoted string literal")
			}
			return errorAt(line, col, "syntax", "unterminated string literal")
		}
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i < len(s) {
				if n := lineBreak(s, i); n > 0 {
					i += n
					t.newline(i)
				} else {
					i++
				}
			}
		case c == quote:
			if !triple {
				t.pos = i + 1
				t.emit(tokString, start, line, col, prefix)
				return nil
			}
			if i+2 < len(s) && s[i+1] == quote && s[i+2] == quote {
				t.pos = i + 3
				t.emit(tokString, start, line, col, prefix)
				return nil
			}
			i++
		default:
			if n := lineBreak(s, i); n > 0 {
				if !triple {
					t.pos = i
					return errorAt(line, col, "syntax", "unterminated string literal (newline inside a single-quoted string)")
				}
				i += n
				t.newline(i)
			} else {
				i++
			}
		}
	}
}

func (t *tokenizer) number() {
	s := t.src
	start, col := t.pos, t.colAt(t.pos)
	for t.pos < len(s) {
		c := s[t.pos]
		if isNameByte(c) || c == '.' {
			t.pos++
			if (c == 'e' || c == 'E') && t.pos < len(s) && (s[t.pos] == '+' || s[t.pos] == '-') &&
				!(len(s[start:]) > 1 && s[start] == '0' && (s[start+1]|0x20) == 'x') {
				t.pos++
			}
			continue
		}
		break
	}
	t.emit(tokNumber, start, t.line, col, "")
}

// operator scans an operator or delimiter: the longest of the 3-, 2- and
// 1-character Python operators, or any other single rune.
func (t *tokenizer) operator() *Error {
	rest := t.src[t.pos:]
	c := rest[0]
	switch c {
	case '(', '[', '{':
		t.depth++
		if t.depth > MaxBracketDepth {
			return errorAt(t.line, t.colAt(t.pos), "nesting", "brackets nested more than %d deep", MaxBracketDepth)
		}
		t.op(1)
		return nil
	case ')', ']', '}':
		if t.depth > 0 {
			t.depth--
		}
		t.op(1)
		return nil
	}
	if len(rest) >= 3 {
		switch rest[:3] {
		case "**=", "//=", ">>=", "<<=", "...":
			t.op(3)
			return nil
		}
	}
	if len(rest) >= 2 && (rest[1] == '=' && strings.IndexByte("=!<>+-*/%&|^@:", c) >= 0 ||
		rest[1] == c && strings.IndexByte("*/<>", c) >= 0 ||
		c == '-' && rest[1] == '>' || c == '<' && rest[1] == '>') {
		t.op(2)
		return nil
	}
	_, n := utf8.DecodeRuneInString(rest)
	t.op(n)
	return nil
}

func (t *tokenizer) op(n int) {
	start, col := t.pos, t.colAt(t.pos)
	t.pos += n
	t.emit(tokOp, start, t.line, col, "")
}
