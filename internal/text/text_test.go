package text

import "testing"

func TestBounded(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdef", 3, "abc…"},
		{"never inside a rune", "aé", 2, "a…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Bounded(tc.s, tc.n); got != tc.want {
				t.Fatalf("Bounded(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}
