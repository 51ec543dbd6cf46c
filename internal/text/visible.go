package text

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Visible renders untrusted text (code, summaries, names, reasons, errors
// an agent or a tool server could have written) for a person to read:
// every character that could rewrite a terminal, reorder or hide what is
// shown, or break a line where none is seen is written as an escape, so
// that what a person reads is what the text holds (docs/design.md "What the
// operator sees is what runs"). Newline and tab are kept; VisibleLine is
// the one-line form.
//
// Escaped (Hidden): the C0 controls but newline and tab (ESC, CR, \v, \f,
// \x1c–\x1e among them), DEL, the C1 controls (\x85 among them), the
// format characters (Unicode Cf: the bidirectional controls U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, zero-width characters,
// tag characters), the line and paragraph separators U+2028 and U+2029,
// and the fillers that render as nothing (U+115F, U+1160, U+3164, U+FFA0).
//
// The escapes: a character is \uXXXX (four lowercase hex digits, \u001b)
// or \u{XXXXX} above U+FFFF; a byte that is not UTF-8 is \udcXX, as
// Python's surrogateescape writes it (0xff is \udcff: a lone surrogate,
// which valid UTF-8 never holds). A backslash followed by "u" in the text
// is itself escaped (\u005c), so every \u a person reads is an escape and
// the rendering is unambiguous; other backslashes stay as they are, and
// code reads as written. The console (ui/static/dom.js visible) renders
// the same escapes, marked.
func Visible(s string) string { return visible(s, false) }

// VisibleLine is Visible for a one-line context (a table cell, a "key:
// value" field, an error's line): newline and tab are escaped too, so no
// value can start a line or move a column of its own.
func VisibleLine(s string) string { return visible(s, true) }

// Hidden reports whether Visible escapes r (VisibleLine also escapes
// newline and tab).
func Hidden(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r < 0x7f:
		return false
	case r <= 0x9f: // DEL and C1
		return true
	}
	switch r {
	case '\u2028', '\u2029', '\u115f', '\u1160', '\u3164', '\uffa0':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func visible(s string, line bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if escaped(s, i, r, n, line) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\u%04x`, 0xdc00+int(s[i]))
		case !escaped(s, i, r, n, line):
			b.WriteString(s[i : i+n])
		case r > 0xffff:
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// escaped reports whether the rune r of n bytes at s[i] is written as an
// escape.
func escaped(s string, i int, r rune, n int, line bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\\':
		return i+1 < len(s) && s[i+1] == 'u'
	case r == '\n' || r == '\t':
		return line
	}
	return Hidden(r)
}

// VisibleJSON is JSON text b (valid UTF-8, as encoding/json writes it)
// for a person to read: every character Visible would escape — which
// encoding/json leaves raw in a string (DEL, C1 controls, bidirectional
// and other format characters) — is written as a JSON \u escape (a
// surrogate pair above U+FFFF). The text is the same JSON value; only how
// it shows changes. A raw newline or tab (white space between tokens) is
// kept, and b is returned as it is when nothing is hidden.
func VisibleJSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		if c := b[i]; c < 0x7f && (c >= 0x20 || c == '\n' || c == '\t') {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if Hidden(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case !Hidden(r):
			out = append(out, b[i:i+n]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// VisibleJSONLine is VisibleJSON for a one-line context (a read's answer
// in a review): the white space between tokens that would break the line
// (newline, tab) is a space, which leaves a JSON text the same value (in
// a string they are escapes already). Text that is not JSON (a cut one)
// is shown the same way.
func VisibleJSONLine(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, string(VisibleJSON(b)))
}

// MarkedLines is code for a person, each line numbered and line at (from
// 1) marked ">" (none when at is 0 or past the end), every line shown
// visibly (Visible): where a review at the call shows the line its run
// stopped at.
func MarkedLines(code string, at int) string {
	lines := strings.Split(strings.TrimRight(code, "\n"), "\n")
	width := len(fmt.Sprint(len(lines)))
	var b strings.Builder
	for i, l := range lines {
		mark := " "
		if i+1 == at {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s %*d  %s\n", mark, width, i+1, Visible(l))
	}
	return strings.TrimRight(b.String(), "\n")
}
