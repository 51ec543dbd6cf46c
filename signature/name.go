package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// maxNameLen is the longest procedure name, as in Bamboo.
const maxNameLen = 60

// ProcedureName returns the proc__ tool name of a signature, compatible with
// Bamboo's procedure_tool_name: "proc__" + "__".join(signature), every
// character outside [0-9A-Za-z_] replaced by "_"; if that is longer than 60
// characters, its first 51 characters + "_" + the first 8 hex digits of
// sha256("::".join(signature)). Replacement is per character (rune), so the
// result is ASCII and byte length equals Python's character length.
func ProcedureName(signature []string) string {
	base := "proc__" + strings.Join(signature, "__")
	var b strings.Builder
	b.Grow(len(base))
	for _, r := range base {
		if r < utf8.RuneSelf && isNameByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxNameLen {
		sum := sha256.Sum256([]byte(strings.Join(signature, "::")))
		name = name[:51] + "_" + hex.EncodeToString(sum[:])[:8]
	}
	return name
}

func isNameByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_'
}

// CodeHash returns the hex sha256 of code with trailing whitespace stripped
// from every line and blank lines dropped, lines joined with "\n"; indentation
// and comments are kept. It matches Bamboo's code_hash exactly, including
// Python's notions of line boundary (str.splitlines) and whitespace
// (str.rstrip).
func CodeHash(code string) string {
	buf := make([]byte, 0, len(code))
	for len(code) > 0 {
		line, rest := pySplitLine(code)
		code = rest
		if line = pyRstrip(line); line == "" {
			continue
		}
		if len(buf) > 0 {
			buf = append(buf, '\n')
		}
		buf = append(buf, line...)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// pySplitLine returns the first line of s without its line break, and the
// rest after the break, using the boundaries of Python's str.splitlines:
// \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, \x85, \u2028, \u2029.
func pySplitLine(s string) (line, rest string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '\r':
				if i+1 < len(s) && s[i+1] == '\n' {
					return s[:i], s[i+2:]
				}
				return s[:i], s[i+1:]
			case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e:
				return s[:i], s[i+1:]
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0x85 || r == 0x2028 || r == 0x2029 {
			return s[:i], s[i+n:]
		}
		i += n
	}
	return s, ""
}

// pyRstrip strips trailing characters for which Python's str.isspace is true.
func pyRstrip(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if r == utf8.RuneError && n <= 1 || !pyIsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// pyIsSpace reports whether Python's str.isspace is true for r (CPython 3.11,
// Unicode 14).
func pyIsSpace(r rune) bool {
	switch {
	case r >= 0x9 && r <= 0xd, r >= 0x1c && r <= 0x20, r == 0x85, r == 0xa0,
		r == 0x1680, r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029,
		r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}
