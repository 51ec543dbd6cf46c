package signature

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// edit replaces src[Off:End] with Repl.
type edit struct {
	Off, End int
	Repl     string
}

// rewriteAsync applies the python-async rewrite (see the package doc) to the
// tokens of src and returns the edits, sorted by offset.
func rewriteAsync(src string, toks []token) ([]edit, *Error) {
	var edits []edit
	next := func(i int) (int, string) {
		j := nextTok(toks, i)
		if j < 0 {
			return -1, ""
		}
		return j, toks[j].text(src)
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind != tokName {
			continue
		}
		if p := prevTok(toks, i); p >= 0 && isOp(src, toks[p], ".") {
			continue // an attribute name
		}
		switch t.text(src) {
		case "await":
			if j, nt := next(i); j < 0 || toks[j].Kind == tokNewline || strings.Contains(")]},:=;", nt) {
				return nil, errorAt(t.Line, t.Col, "syntax", "await must be followed by an expression")
			}
			end := t.End
			for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
				end++
			}
			edits = append(edits, edit{t.Off, end, ""})
		case "async":
			j, nt := next(i)
			if j < 0 || nt != "def" || strings.ContainsAny(src[t.End:toks[j].Off], "\r\n\\#") {
				return nil, errorAt(t.Line, t.Col, "async", "only async def is supported in dialect python-async (async for and async with are not)")
			}
			edits = append(edits, edit{t.Off, toks[j].Off, ""})
		case "asyncio":
			e, err := rewriteGather(src, toks, i)
			if err != nil {
				return nil, err
			}
			edits = append(edits, e...)
		}
	}
	sort.Slice(edits, func(a, b int) bool { return edits[a].Off < edits[b].Off })
	return edits, nil
}

// prevTok returns the index of the last non-comment token before i, or -1.
func prevTok(toks []token, i int) int {
	for j := i - 1; j >= 0; j-- {
		if toks[j].Kind != tokComment {
			return j
		}
	}
	return -1
}

// rewriteGather rewrites asyncio.gather(...) starting at toks[i] (asyncio).
func rewriteGather(src string, toks []token, i int) ([]edit, *Error) {
	t := toks[i]
	dot := nextTok(toks, i)
	if dot < 0 || !isOp(src, toks[dot], ".") {
		return nil, errorAt(t.Line, t.Col, "asyncio", "asyncio is only supported as asyncio.gather(...) in dialect python-async")
	}
	name := nextTok(toks, dot)
	if name < 0 || toks[name].Kind != tokName {
		return nil, errorAt(t.Line, t.Col, "asyncio", "asyncio is only supported as asyncio.gather(...) in dialect python-async")
	}
	if attr := toks[name].text(src); attr != "gather" {
		return nil, errorAt(t.Line, t.Col, "asyncio."+attr, "asyncio.%s is not supported in dialect python-async (only asyncio.gather)", attr)
	}
	lp := nextTok(toks, name)
	if lp < 0 || !isOp(src, toks[lp], "(") {
		return nil, errorAt(t.Line, t.Col, "asyncio.gather", "asyncio.gather is only supported when called: asyncio.gather(a, b, ...)")
	}
	// Find the matching ')' and inspect the top-level arguments.
	depth, rp := 0, -1
	args, starred := 0, -1
	argStart := true
	for j := lp + 1; j < len(toks) && rp < 0; j++ {
		u := toks[j]
		if u.Kind == tokComment {
			continue
		}
		text := u.text(src)
		if depth == 0 && argStart {
			if text != ")" {
				args++
			}
			if text == "*" {
				starred = j
			}
			if text == "**" {
				return nil, errorAt(u.Line, u.Col, "asyncio.gather keyword", "keyword arguments to asyncio.gather are not supported (calls run in order and a failure fails the procedure)")
			}
			if u.Kind == tokName {
				if k := nextTok(toks, j); k >= 0 && isOp(src, toks[k], "=") {
					return nil, errorAt(u.Line, u.Col, "asyncio.gather keyword", "keyword argument %s to asyncio.gather is not supported (calls run in order and a failure fails the procedure)", text)
				}
			}
		}
		argStart = false
		if u.Kind != tokOp {
			continue
		}
		switch text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth == 0 {
				if text != ")" {
					return nil, errorAt(u.Line, u.Col, "syntax", "mismatched %s in asyncio.gather call", text)
				}
				rp = j
			}
			depth--
		case ",":
			argStart = depth == 0
		}
	}
	if rp < 0 {
		return nil, errorAt(toks[lp].Line, toks[lp].Col, "syntax", "unclosed ( in asyncio.gather call")
	}
	if starred >= 0 {
		if args != 1 {
			return nil, errorAt(toks[starred].Line, toks[starred].Col, "asyncio.gather", "asyncio.gather with a starred argument is only supported alone: asyncio.gather(*xs)")
		}
		return []edit{{t.Off, toks[starred].End, "list(" + keepBreaks(src[t.Off:toks[starred].End])}}, nil
	}
	return []edit{{t.Off, toks[lp].End, "[" + keepBreaks(src[t.Off:toks[lp].End])}, {toks[rp].Off, toks[rp].End, "]"}}, nil
}

// keepBreaks returns a line continuation (backslash, line break) for every
// line break in s, so that replacing s keeps the line count. Comments
// cannot occur in s (it spans tokens of one call head), nor can strings.
func keepBreaks(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if n := lineBreak(s, i); n > 0 {
			b.WriteString("\\")
			b.WriteString(s[i : i+n])
			i += n - 1
		}
	}
	return b.String()
}

// mergeEdits merges two lists of edits sorted by offset into one.
func mergeEdits(a, b []edit) []edit {
	if len(b) == 0 {
		return a
	}
	out := make([]edit, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Off < out[j].Off })
	return out
}

// applyEdits returns src with the sorted, non-overlapping edits applied.
func applyEdits(src string, edits []edit) string {
	if len(edits) == 0 {
		return src
	}
	var b strings.Builder
	b.Grow(len(src))
	last := 0
	for _, e := range edits {
		b.WriteString(src[last:e.Off])
		b.WriteString(e.Repl)
		last = e.End
	}
	b.WriteString(src[last:])
	return b.String()
}

// posMap maps positions in a rewritten source back to the original code.
type posMap struct {
	orig, rewritten string
	edits           []edit
	newStarts       []int // offset in rewritten of each edit's replacement
	// origLines and newLines index orig and rewritten, made on first use.
	origLines, newLines *lineIndex
}

func newPosMap(orig, rewritten string, edits []edit) *posMap {
	m := &posMap{orig: orig, rewritten: rewritten, edits: edits}
	delta := 0
	for _, e := range edits {
		m.newStarts = append(m.newStarts, e.Off+delta)
		delta += len(e.Repl) - (e.End - e.Off)
	}
	return m
}

// origPos maps a (line, col) of the rewritten source to the original code.
// A nil map is the identity.
func (m *posMap) origPos(line, col int) (int, int) {
	if m == nil || len(m.edits) == 0 || line <= 0 {
		return line, col
	}
	r := m.rewrittenLines().offset(line, col)
	k := sort.Search(len(m.newStarts), func(i int) bool { return m.newStarts[i] > r }) - 1
	o := r
	if k >= 0 {
		e := m.edits[k]
		newEnd := m.newStarts[k] + len(e.Repl)
		if r < newEnd {
			o = e.Off + min(r-m.newStarts[k], e.End-e.Off)
		} else {
			o = e.End + r - newEnd
		}
	}
	return m.origIndex().lineCol(min(o, len(m.orig)))
}

// origIndex is the index of the original code.
func (m *posMap) origIndex() *lineIndex {
	if m.origLines == nil {
		m.origLines = newLineIndex(m.orig)
	}
	return m.origLines
}

// rewrittenLines is the index of the rewritten source.
func (m *posMap) rewrittenLines() *lineIndex {
	if m.newLines == nil {
		m.newLines = newLineIndex(m.rewritten)
	}
	return m.newLines
}

// lineIndex is a string's line starts (line breaks as go.starlark.net
// counts them): offsetOf and lineColOf without scanning the string from
// its start.
type lineIndex struct {
	s      string
	starts []int // the byte offset of each line
	ascii  bool  // s is ASCII: a column is a byte
}

func newLineIndex(s string) *lineIndex {
	li := &lineIndex{s: s, starts: make([]int, 1, strings.Count(s, "\n")+2), ascii: true}
	if strings.IndexByte(s, '\r') < 0 {
		for i := 0; ; {
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			li.starts = append(li.starts, i)
		}
	} else {
		for i := 0; i < len(s); i++ {
			if n := lineBreak(s, i); n > 0 {
				i += n - 1
				li.starts = append(li.starts, i+1)
			}
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			li.ascii = false
			break
		}
	}
	return li
}

// offset is offsetOf(li.s, line, col).
func (li *lineIndex) offset(line, col int) int {
	s, off := li.s, 0
	switch {
	case line <= 1:
	case line-1 < len(li.starts):
		off = li.starts[line-1]
	default:
		return len(s)
	}
	if li.ascii {
		end := len(s) // where the line's break starts
		if line = max(line, 1); line < len(li.starts) {
			if end = li.starts[line] - 1; end-1 >= off && s[end-1:end+1] == "\r\n" {
				end--
			}
		}
		return min(off+max(col-1, 0), end)
	}
	for c := 1; c < col && off < len(s) && lineBreak(s, off) == 0; c++ {
		_, n := utf8.DecodeRuneInString(s[off:])
		off += n
	}
	return off
}

// lineCol is lineColOf(li.s, off).
func (li *lineIndex) lineCol(off int) (int, int) {
	k := sort.SearchInts(li.starts, off+1) - 1 // the last line starting at or before off
	if li.ascii {
		return k + 1, off - li.starts[k] + 1
	}
	return k + 1, utf8.RuneCountInString(li.s[li.starts[k]:off]) + 1
}

// offsetOf returns the byte offset of 1-based (line, rune col) in s, with
// line breaks \n, \r\n and \r as in go.starlark.net; past the end of a line
// it stops at the line break.
func offsetOf(s string, line, col int) int {
	off := 0
	for l := 1; l < line && off < len(s); off++ {
		if n := lineBreak(s, off); n > 0 {
			off += n - 1
			l++
		}
	}
	for c := 1; c < col && off < len(s) && lineBreak(s, off) == 0; c++ {
		_, n := utf8.DecodeRuneInString(s[off:])
		off += n
	}
	return off
}

// lineColOf returns the 1-based line and rune column of byte offset off in s.
func lineColOf(s string, off int) (int, int) {
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if n := lineBreak(s, i); n > 0 {
			if i+n > off { // inside \r\n
				break
			}
			i += n - 1
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCountInString(s[start:off]) + 1
}
