package jsonvalue

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
		ok   bool
	}{
		{"integer stays exact", `9007199254740993`, int64(9007199254740993), true},
		{"largest int64", `9223372036854775807`, int64(math.MaxInt64), true},
		{"past int64 is a float", `9223372036854775808`, 9223372036854775808.0, true},
		{"fraction is a float", `2.0`, 2.0, true},
		{"exponent is a float", `1e3`, 1000.0, true},
		{"nested", `{"a":[1,2.5,{"b":-3}],"s":"1"}`, map[string]any{"a": []any{int64(1), 2.5, map[string]any{"b": int64(-3)}}, "s": "1"}, true},
		{"white space around", " [true, null] \n", []any{true, nil}, true},
		{"two values", `1 2`, nil, false},
		{"stray closing bracket", `0 ]`, nil, false},
		{"empty", ``, nil, false},
		{"out of float range", `1e400`, nil, false},
		{"not JSON", `{a:1}`, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Fatalf("Decode(%q) error %v, want ok=%v", tc.in, err, tc.ok)
			}
			if tc.ok && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decode(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestPlain(t *testing.T) {
	in := map[string]any{"i": json.Number("9007199254740993"), "f": json.Number("1.5"), "e": json.Number("1e3"),
		"l": []any{json.Number("2"), map[string]any{"n": json.Number("-3")}}, "s": "1"}
	want := map[string]any{"i": int64(9007199254740993), "f": 1.5, "e": 1000.0, "l": []any{int64(2), map[string]any{"n": int64(-3)}}, "s": "1"}
	got, err := Plain(in)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Plain = %#v, %v", got, err)
	}
	if _, err := Plain(json.Number("1e400")); err == nil {
		t.Fatal("Plain accepted a number out of float64's range")
	}
}

func TestNormalize(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	deep := any(nil)
	for range MaxDepth + 2 {
		deep = []any{deep}
	}
	tests := []struct {
		name string
		in   any
		want any
		ok   bool
	}{
		{"JSON-safe as it is", map[string]any{"a": []any{int64(1), "x"}}, map[string]any{"a": []any{int64(1), "x"}}, true},
		{"other ints", []any{1, int32(2), uint32(3)}, []any{int64(1), int64(2), int64(3)}, true},
		{"float32", float32(0.5), 0.5, true},
		{"json.Number", json.Number("12"), int64(12), true},
		{"raw message", json.RawMessage(`{"n":1}`), map[string]any{"n": int64(1)}, true},
		{"string slice and map", []any{[]string{"a"}, map[string]string{"k": "v"}}, []any{[]any{"a"}, map[string]any{"k": "v"}}, true},
		{"struct through encoding/json", point{X: 4}, map[string]any{"x": int64(4)}, true},
		{"NaN", math.NaN(), nil, false},
		{"infinity inside", []any{math.Inf(1)}, nil, false},
		{"too deep", deep, nil, false},
		{"not JSON", make(chan int), nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Normalize(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("Normalize error %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Normalize = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestNumbersAndClone(t *testing.T) {
	x, err := Numbers(map[string]any{"n": 3, "f": 1.5})
	if err != nil || !reflect.DeepEqual(x, map[string]any{"n": json.Number("3"), "f": json.Number("1.5")}) {
		t.Fatalf("Numbers = %#v, %v", x, err)
	}
	src := map[string]any{"n": int64(3), "l": []any{"a"}}
	c, err := Clone(src)
	if err != nil || !reflect.DeepEqual(c, map[string]any{"n": 3.0, "l": []any{"a"}}) {
		t.Fatalf("Clone = %#v, %v", c, err)
	}
	c["l"].([]any)[0] = "changed"
	if src["l"].([]any)[0] != "a" {
		t.Fatal("Clone shares the source's slices")
	}
}

// FuzzDecode: Decode accepts only what encoding/json accepts, never
// panics, and gives the numbers encoding/json gives (as float64).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,-3e2,"x",true,null]}`, `9223372036854775807`, `9223372036854775808`,
		`1.0`, `"\u00e9\ud83d\ude00"`, `[[[[]]]]`, `{"":{}}`, `1 2`, `"\ud800"`, `-0`, `1e400`, `0 ]0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		var oracle any
		if err := json.Unmarshal(bytes.TrimSpace(data), &oracle); err != nil {
			t.Fatalf("Decode accepted %q, which encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(asFloats(v), oracle) {
			t.Fatalf("Decode(%q) = %#v, encoding/json says %#v", data, v, oracle)
		}
	})
}

// asFloats turns int64 into float64, as encoding/json decodes numbers.
func asFloats(x any) any {
	switch x := x.(type) {
	case int64:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = asFloats(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = asFloats(e)
		}
		return out
	}
	return x
}
