// Package text holds small string helpers shared by procgraph's packages.
package text

// Bounded cuts s to at most n bytes on a rune boundary, marking the cut
// with an ellipsis.
func Bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
