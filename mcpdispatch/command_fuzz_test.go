package mcpdispatch

import "testing"

// FuzzSplitCommand: any --upstream-mcp-command value splits or is refused;
// never a panic, and a split never yields an empty program name.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`server --stdio`, `"my server" 'a b' c\ d`, `unbalanced "quote`, `trailing\`, ``, `   `, "a\tb\nc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv, err := SplitCommand(s)
		if err != nil {
			return
		}
		if len(argv) == 0 || argv[0] == "" {
			t.Fatalf("SplitCommand(%q) = %q with no program", s, argv)
		}
	})
}
