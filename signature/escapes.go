package signature

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// pythonEscapes are the characters that may follow a backslash in a
// Python str literal (besides a line break); pythonBytesEscapes those of a
// bytes literal, where \u, \U and \N are not escapes. CPython keeps any
// other backslash as it is, with a warning; Starlark rejects it, or (\u
// and \U in bytes) reads an escape CPython does not.
const (
	pythonEscapes      = "\\'\"abfnrtv01234567xuUN"
	pythonBytesEscapes = "\\'\"abfnrtv01234567x"
)

// escapeEdits returns, for dialect python-async, the edits that keep each
// backslash CPython would keep in a non-raw string literal (`"\d+"` is
// backslash, d, +): the backslash is doubled, so Starlark reads the same
// value. Each gets a Warning at its position, as CPython warns. Starlark
// code is not rewritten: there such an escape stays an error.
func escapeEdits(src string, toks []token) ([]edit, []Warning) {
	var edits []edit
	var warnings []Warning
	for _, t := range toks {
		if t.Kind != tokString || strings.ContainsAny(t.Prefix, "rRfF") || !strings.Contains(t.text(src), "\\") {
			continue
		}
		escapes := pythonEscapes
		if strings.ContainsAny(t.Prefix, "bB") {
			escapes = pythonBytesEscapes
		}
		line, col := t.Line, t.Col
		for i := t.Off; i < t.End; {
			if n := lineBreak(src, i); n > 0 {
				i += n
				line, col = line+1, 1
				continue
			}
			if src[i] != '\\' || i+1 >= t.End {
				_, n := utf8.DecodeRuneInString(src[i:])
				i += n
				col++
				continue
			}
			next, n := utf8.DecodeRuneInString(src[i+1:])
			if lineBreak(src, i+1) == 0 && !strings.ContainsRune(escapes, next) {
				edits = append(edits, edit{Off: i, End: i, Repl: `\`})
				warnings = append(warnings, Warning{Line: line, Column: col, Message: fmt.Sprintf(
					`line %d, column %d: invalid escape sequence '\%c' is kept as a backslash and %c, as CPython does (write \\%c, or a raw string r"...", to say so)`,
					line, col, next, next, next)})
			}
			// The backslash and the escaped character (a line break is
			// counted at the top of the loop).
			i++
			col++
			if lineBreak(src, i) == 0 {
				i += n
				col++
			}
		}
	}
	return edits, warnings
}
