package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rivo/uniseg"
	"golang.org/x/term"

	ptext "github.com/procgraph/procgraph/internal/text"
)

// termOut is standard output when it is a terminal: a table fits its
// width (0: as wide as its cells) and a word of state is coloured. A
// command's --wide and --no-color turn either off; NO_COLOR and TERM=dumb
// turn colour off. Output that is not a terminal is printed as it is.
type termOut struct {
	io.Writer
	width int
	color bool
}

// terminalOut wraps w in a termOut when it is a terminal.
func terminalOut(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return w
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		width = 0
	}
	return &termOut{Writer: w, width: width, color: os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}
}

// display is how w shows tables: the width to fit (0: none) and whether
// words of state are coloured.
func display(w io.Writer) (width int, color bool) {
	if t, ok := w.(*termOut); ok {
		return t.width, t.color
	}
	return 0, false
}

// The ANSI colours of words of state.
const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// stateColors is the colour of each word of state a table cell, a
// key: value line or doctor's check may consist of.
var stateColors = map[string]string{
	"ok": ansiGreen, "succeeded": ansiGreen, "allowed": ansiGreen, "approved": ansiGreen, "ran": ansiGreen,
	"FAIL": ansiRed, "failed": ansiRed, "denied": ansiRed, "rejected": ansiRed, "demoted": ansiRed, "down": ansiRed,
	"expired": ansiRed, "run_lost": ansiRed, "revoked": ansiRed,
	"warn": ansiYellow, "WARN": ansiYellow, "pending": ansiYellow, "stale": ansiYellow, "degraded": ansiYellow,
}

// paint is s coloured as its word of state, when color is on and s is one.
func paint(s string, color bool) string {
	if c, ok := stateColors[strings.TrimSpace(s)]; ok && color {
		return c + s + ansiReset
	}
	return s
}

// minColumn is the fewest cells a shrunk column keeps (its header's width
// when that is more).
const minColumn = 8

// wholeColumns are the columns a table never cuts: what a person copies
// into the next command (an id, a name) and the short words of state.
var wholeColumns = map[string]bool{
	"ID": true, "NAME": true, "PROCEDURE": true, "GRANTED PROCEDURE": true, "STATUS": true, "DEADLINE": true,
	"AT": true, "KIND": true, "OUTCOME": true, "RESULT": true, "READ-ONLY": true, "ACTIVE": true, "CURRENT": true,
	"EXPOSED": true, "FREQUENCY": true, "USES": true, "AUTO-RUN": true, "PHASE": true, "CAPTURED": true,
	"SET AT": true, "STATE": true, "SERVER": true,
}

// table prints a header and rows, aligned, two spaces apart; each cell on
// its line, shown through text.VisibleLine (values are what agents and
// tool servers wrote). On a terminal it fits the width (fitColumns) and
// colours words of state; a column left out is named under the table.
func table(w io.Writer, header string, rows [][]string) {
	heads := strings.Split(header, "\t")
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, heads)
	for _, r := range rows {
		line := make([]string, len(r))
		for i, c := range r {
			line[i] = ptext.VisibleLine(c)
		}
		cells = append(cells, line)
	}
	n := 0
	for _, r := range cells {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	for _, r := range cells {
		for i, c := range r {
			widths[i] = max(widths[i], uniseg.StringWidth(c))
		}
	}
	width, color := display(w)
	widths = fitColumns(widths, heads, width)
	var b strings.Builder
	for ri, r := range cells {
		b.Reset()
		var shown []string
		for i, c := range r {
			if widths[i] < 0 {
				continue
			}
			c = cut(c, widths[i])
			pad := widths[i] - uniseg.StringWidth(c)
			if ri > 0 {
				c = paint(c, color)
			}
			shown = append(shown, c+strings.Repeat(" ", pad))
		}
		b.WriteString(strings.TrimRight(strings.Join(shown, "  "), " "))
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
	var left []string
	for i, wd := range widths {
		if wd < 0 && i < len(heads) {
			left = append(left, heads[i])
		}
	}
	if len(left) > 0 {
		note := fmt.Sprintf("(--wide shows %s)", strings.Join(left, ", "))
		if width > 0 {
			note = cut(note, width)
		}
		fmt.Fprintln(w, note)
	}
}

// fitColumns returns widths narrowed to fit, with their two-space gaps,
// in width (0: no limit). A column of wholeColumns is never cut; the
// others give way, the widest first, a cell at a time, down to minColumn
// (or their header); when that is not enough, the rightmost column that
// may be cut is left out (-1) and the rest fitted again. What still does
// not fit is left to the terminal to wrap.
func fitColumns(natural []int, heads []string, width int) []int {
	widths := append([]int(nil), natural...)
	if width <= 0 {
		return widths
	}
	cuttable := func(i int) bool { return i >= len(heads) || !wholeColumns[heads[i]] }
	floor := func(i int) int {
		if i < len(heads) {
			return max(minColumn, uniseg.StringWidth(heads[i]))
		}
		return minColumn
	}
	left := make([]bool, len(natural))
	for {
		over, shown := -width, 0
		for i, w := range natural {
			widths[i] = w
			if left[i] {
				widths[i] = -1
				continue
			}
			over += w
			shown++
		}
		over += 2 * max(shown-1, 0)
		for ; over > 0; over-- {
			widest := -1
			for i, w := range widths {
				if w > floor(i) && cuttable(i) && (widest < 0 || w > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			widths[widest]--
		}
		if over <= 0 {
			return widths
		}
		last := -1
		for i := 1; i < len(natural); i++ {
			if cuttable(i) && !left[i] {
				last = i
			}
		}
		if last < 0 {
			return widths // nothing more to leave out: the terminal wraps
		}
		left[last] = true
	}
}

// cut is s in at most width cells, ending in "…" when cut.
func cut(s string, width int) string {
	if uniseg.StringWidth(s) <= width {
		return s
	}
	var b strings.Builder
	used := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		cw := g.Width()
		if used+cw > width-1 {
			break
		}
		b.WriteString(g.Str())
		used += cw
	}
	return b.String() + "…"
}
