package signature

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// maxNameLen is the longest procedure name, as in Bamboo.
const maxNameLen = 60

// Name returns Names(signature, nil)[0]: the name of the procedure of
// signature when no tool is known to be in the catalogue (what
// `procgraph signature` prints without --tools).
func Name(signature []string) string { return Names(signature, nil)[0] }

// Names returns the names the procedure of signature (sorted and
// de-duplicated, as Analyze returns it) is created under, best first; a
// capture takes the next one only when a stored procedure of another
// signature holds one (which the rule makes unreachable but for data stored
// before it, or an 80-bit hash collision). known tells whether a tool is in
// the catalogue; nil knows none. The rule:
//
//   - Plain signatures (see Plain) get Bamboo's name, ProcedureName: for them
//     it is a lossless encoding (splitting it on "__" gives the signature
//     back) that never looks like a truncated name, so no other signature
//     can have it, whatever it calls and whenever it is captured.
//   - A signature whose entries are plain but whose Bamboo name is longer
//     than 60 characters gets Bamboo's truncated name (51 characters, "_",
//     8 hex digits of a hash) only when every entry is a catalogue tool:
//     that name is shared by every signature with the same first 45
//     characters and the same 32-bit hash, which anyone can find in ~2^32
//     hashes with invented tool names; with catalogue tools only, the search
//     is confined to subsets of the catalogue (hopeless unless some 32
//     catalogue tools sort after the shared prefix), and what it finds is a
//     procedure of operator-listed tools. Such a collision is resolved by
//     the next name.
//   - Every other signature (an entry with "__" — such as a nested proc__
//     reference —, with an edge underscore or a non-ASCII letter; or a long
//     one with a tool the catalogue lacks) gets HashedName.
//
// The next name is always HashedName. The three forms never meet: a plain
// name never holds "___" nor has the truncated shape (which every truncated
// name has), and a hashed name ends with "___" and 20 hex digits, which
// neither of the others can.
func Names(signature []string, known func(tool string) bool) []string {
	hashed := HashedName(signature)
	switch {
	case Plain(signature):
	case plainEntries(signature) && bambooLen(signature) > maxNameLen:
		for _, e := range signature {
			if known == nil || !known(e) {
				return []string{hashed}
			}
		}
	default:
		return []string{hashed}
	}
	return []string{ProcedureName(signature), hashed}
}

// Plain reports whether signature is not empty, every entry is ASCII letters
// and digits in runs joined by single underscores (no "__", no leading or
// trailing "_"), and "proc__" + "__".join(signature) is at most 60
// characters. Names gives a plain signature its Bamboo name whatever the
// catalogue says.
// A name of 60 characters shaped like a truncated one (see truncatedShape)
// is not plain either: it would take the name of a long signature.
func Plain(signature []string) bool {
	if !plainEntries(signature) {
		return false
	}
	n := bambooLen(signature)
	return n < maxNameLen || n == maxNameLen && !truncatedShape(ProcedureName(signature))
}

// truncatedShape reports whether a 60-character name has the shape of
// Bamboo's truncated names: "_" then 8 lowercase hex digits after its first
// 51 characters.
func truncatedShape(name string) bool {
	if len(name) != maxNameLen || name[51] != '_' {
		return false
	}
	for i := 52; i < maxNameLen; i++ {
		if c := name[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func plainEntries(signature []string) bool {
	if len(signature) == 0 {
		return false
	}
	for _, e := range signature {
		if !plainEntry(e) {
			return false
		}
	}
	return true
}

// bambooLen is the length of "proc__" + "__".join(signature) for plain
// entries.
func bambooLen(signature []string) int {
	n := len(procPrefix) + 2*(len(signature)-1)
	for _, e := range signature {
		n += len(e)
	}
	return n
}

// plainEntry reports whether e is ASCII letters and digits in runs joined by
// single underscores.
func plainEntry(e string) bool {
	if e == "" || e[0] == '_' || e[len(e)-1] == '_' {
		return false
	}
	for i := 0; i < len(e); i++ {
		c := e[i]
		if c == '_' {
			if e[i+1] == '_' {
				return false
			}
			continue
		}
		if c >= utf8.RuneSelf || !isNameByte(c) {
			return false
		}
	}
	return true
}

// hashedLen is the number of hex digits of the hash in a hashed name: 80 bits,
// so finding another signature with a given hashed name takes ~2^80 hashes.
const hashedLen = 20

// hashedMarker separates a hashed name's readable part from its hash; no
// plain name holds it.
const hashedMarker = "___"

// HashedName returns "proc__" + a readable prefix + "___" + the first 20 hex
// digits of the SHA-256 of the signature's entries, each preceded by its
// length as a uvarint (so entries holding any character hash unambiguously).
// The readable prefix is the first 31 characters of "__".join(signature) with
// every character outside [0-9A-Za-z_] replaced by "_" (per rune, as
// ProcedureName does), trailing underscores dropped. The name is at most 60
// characters, ASCII, and a valid identifier (tools.proc__... works).
func HashedName(signature []string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, e := range signature {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(e)))])
		h.Write([]byte(e))
	}
	sum := hex.EncodeToString(h.Sum(nil))[:hashedLen]
	room := maxNameLen - len(procPrefix) - len(hashedMarker) - hashedLen
	readable := sanitize(strings.Join(signature, "__"), room)
	readable = strings.TrimRight(readable, "_")
	return procPrefix + readable + hashedMarker + sum
}

// sanitize returns s with every rune outside [0-9A-Za-z_] replaced by "_",
// cut to at most max bytes.
func sanitize(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() == max {
			break
		}
		if r < utf8.RuneSelf && isNameByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ProcedureName returns Bamboo's name for a signature (procedure_tool_name):
// "proc__" + "__".join(signature), every character outside [0-9A-Za-z_]
// replaced by "_"; if that is longer than 60 characters, its first 51 characters + "_" + the first 8 hex digits of
// sha256("::".join(signature)). Replacement is per character (rune), so the
// result is ASCII and byte length equals Python's character length. It is
// not injective (see Name, which uses it only where it is).
func ProcedureName(signature []string) string {
	base := "proc__" + strings.Join(signature, "__")
	name := sanitize(base, len(base))
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
