package signature

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"
)

// lineSeparator returns the length of the line separator at s[i] that
// Python's splitlines ends a line at and Starlark's scanner does not — \v,
// \f, \x1c, \x1d, \x1e, U+0085, U+2028, U+2029 — or of a CR not followed by
// LF, and 0 for anything else. CodeHash splits lines at them, so two texts
// that differ only in one of them and a newline would share a code hash
// while Starlark reads them as different programs.
func lineSeparator(s string, i int) int {
	switch c := s[i]; c {
	case '\v', '\f', 0x1c, 0x1d, 0x1e:
		return 1
	case '\r':
		if i+1 < len(s) && s[i+1] == '\n' {
			return 0
		}
		return 1
	case 0xc2:
		if strings.HasPrefix(s[i:], "\u0085") {
			return 2
		}
	case 0xe2:
		if strings.HasPrefix(s[i:], "\u2028") || strings.HasPrefix(s[i:], "\u2029") {
			return 3
		}
	}
	return 0
}

// checkSeparators refuses (feature line_separator, at its position) the
// first lineSeparator in code outside a string literal of toks (code's
// tokens), and a lone CR anywhere. Past a tokenizer error, the rest counts
// as outside strings.
func checkSeparators(code string, toks []token) *Error {
	if !strings.ContainsAny(code, "\v\f\x1c\x1d\x1e\r\u0085\u2028\u2029") {
		return nil
	}
	next := 0 // index of the first string token not ending before i
	for i := 0; i < len(code); i++ {
		n := lineSeparator(code, i)
		if n == 0 {
			continue
		}
		for next < len(toks) && (toks[next].Kind != tokString || toks[next].End <= i) {
			next++
		}
		inString := next < len(toks) && toks[next].Off <= i
		if inString && code[i] != '\r' {
			i += n - 1
			continue
		}
		r, _ := utf8.DecodeRuneInString(code[i:])
		line, col := lineColOf(code, i)
		what := "outside a string literal"
		if code[i] == '\r' {
			what = "other than in CRLF"
		}
		return errorAt(line, col, "line_separator",
			"%s %s ends a line for code_hash (Python's splitlines) but not for Starlark: use a newline, or an escape inside a string", runeName(r), what)
	}
	return nil
}

func runeName(r rune) string {
	if r == '\r' {
		return "CR (U+000D)"
	}
	return fmt.Sprintf("U+%04X", r)
}

// StatementHash is the hash of a Starlark block's tokens (lowercase hex of
// sha256): each token's kind and text, comments left out, no positions; a
// statement's indentation is kept (it is structure) and a line break is a
// token whatever its style (the last line's too). Code that CodeHash merges — triple-quoted
// strings that differ in blank lines or trailing spaces — has distinct
// statement hashes. Analyze computes it on Analysis.Source.
func StatementHash(source string) (string, error) {
	toks, err := tokenize(source)
	if err != nil {
		return "", err
	}
	return statementHash(source, toks), nil
}

// The kinds statementHash writes beside the tokenizer's own.
const tokIndent tokKind = 100

func statementHash(src string, toks []token) string {
	return statementHashOf(src, len(toks), slices.Values(toks))
}

// statementHashOf is statementHash of the tokens of src that toks yields
// (about n).
func statementHashOf(src string, n int, toks iter.Seq[token]) string {
	// What is hashed is written out first, and hashed at once.
	buf := make([]byte, 0, len(src)+3*n+8)
	write := func(kind tokKind, text string) {
		buf = append(buf, byte(kind))
		buf = binary.AppendUvarint(buf, uint64(len(text)))
		buf = append(buf, text...)
	}
	ended := true // the last token written ends a logical line
	for t := range toks {
		switch t.Kind {
		case tokComment:
			continue
		case tokNewline:
			write(tokNewline, "")
			ended = true
			continue
		}
		ended = false
		if t.StmtStart {
			start := strings.LastIndexAny(src[:t.Off], "\n\r") + 1
			write(tokIndent, src[start:t.Off])
		}
		write(t.Kind, t.text(src))
	}
	if !ended { // code without a final line break
		write(tokNewline, "")
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}
