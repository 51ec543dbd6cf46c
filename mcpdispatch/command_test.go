package mcpdispatch

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		"job-tools":                             {"job-tools"},
		"  /bin/tools --stdio  -v ":             {"/bin/tools", "--stdio", "-v"},
		`tools --name 'a b' --x "c \"d\" \\ e"`: {"tools", "--name", "a b", "--x", `c "d" \ e`},
		`tools a\ b '' "$HOME"`:                 {"tools", "a b", "", "$HOME"},
	} {
		got, err := SplitCommand(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "   ", `tools "open`, `tools 'open`, `tools \`} {
		if got, err := SplitCommand(bad); err == nil {
			t.Errorf("SplitCommand(%q) = %q, want an error", bad, got)
		}
	}
}
