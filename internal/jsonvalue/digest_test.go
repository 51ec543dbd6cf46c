package jsonvalue

import (
	"encoding/json"
	"math"
	"testing"
)

func TestDigest(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		same bool
	}{
		{"key order does not count", map[string]any{"a": 1, "b": "x"}, map[string]any{"b": "x", "a": 1}, true},
		{"an integer is one number in any type", map[string]any{"n": int64(7)}, map[string]any{"n": 7.0}, true},
		{"a number's text does not count", map[string]any{"n": json.Number("1.0")}, map[string]any{"n": 1}, true},
		{"nested values are compared whole", map[string]any{"l": []any{1, map[string]any{"k": true}}}, map[string]any{"l": []any{1, map[string]any{"k": true}}}, true},
		{"another value", map[string]any{"panda_id": 7}, map[string]any{"panda_id": 8}, false},
		{"a string is not a number", map[string]any{"panda_id": "7"}, map[string]any{"panda_id": 7}, false},
		{"another key", map[string]any{"a": 1}, map[string]any{"b": 1}, false},
		{"a fraction is not an integer", map[string]any{"n": 1.5}, map[string]any{"n": 1}, false},
		{"negative zero is zero", map[string]any{"l": []any{math.Copysign(0, -1)}}, map[string]any{"l": []any{0}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			da, err := Digest(tc.a)
			if err != nil {
				t.Fatal(err)
			}
			db, err := Digest(tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if (da == db) != tc.same {
				t.Fatalf("Digest(%v) = %s, Digest(%v) = %s: same = %v, want %v", tc.a, da, tc.b, db, da == db, tc.same)
			}
			if len(da) != len("sha256:")+64 || da[:7] != "sha256:" {
				t.Fatalf("Digest = %q, want sha256: and 64 hex", da)
			}
		})
	}
}

func TestCanonicalIsCompactSorted(t *testing.T) {
	b, err := Canonical(map[string]any{"z": []any{2.0, "<"}, "a": map[string]any{"y": nil, "b": false}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"b":false,"y":null},"z":[2,"\u003c"]}`; string(b) != want {
		t.Fatalf("Canonical = %s, want %s", b, want)
	}
}

// FuzzCanonical: the canonical JSON of any JSON value is a fixed point
// (its own canonical JSON), and does not depend on how numbers were
// decoded (exact integers or their text).
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1.0,2e3,"x"]}`, `1.5`, `{"n":12345678901234567890}`, `[null,true,{"<":"\u2028"}]`, `-0.0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			return
		}
		c1, err := Canonical(v)
		if err != nil {
			return // not JSON-safe (a float out of range): no digest
		}
		v2, err := Decode(c1)
		if err != nil {
			t.Fatalf("Canonical(%s) = %s, which does not decode: %v", b, c1, err)
		}
		c2, err := Canonical(v2)
		if err != nil || string(c2) != string(c1) {
			t.Fatalf("Canonical is not a fixed point: %s then %s (%v)", c1, c2, err)
		}
		n, err := DecodeNumbers(b)
		if err != nil {
			t.Fatal(err)
		}
		if c3, err := Canonical(n); err != nil || string(c3) != string(c1) {
			t.Fatalf("Canonical of %s with its numbers' text = %s, with exact numbers %s (%v)", b, c3, c1, err)
		}
	})
}
