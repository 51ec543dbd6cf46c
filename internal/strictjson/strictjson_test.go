package strictjson

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/procgraph/procgraph/fault"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, data, field string
		ok                bool
	}{
		{"plain", `{"a": 1, "b": [1, {"c": 2}]}`, "", true},
		{"same key in two objects", `[{"a": 1}, {"a": 2}]`, "", true},
		{"paired surrogates", `"\ud83d\ude00"`, "", true},
		{"escaped backslash then u", `"\\ud800"`, "", true},
		{"duplicate at the top", `{"a": 1, "a": 2}`, "a", false},
		{"duplicate deep", `{"a": [{"b": {"c": 1, "c": 1}}]}`, "a.0.b.c", false},
		{"lone high surrogate", `"\ud800x"`, "", false},
		{"lone low surrogate", `"\udc00"`, "", false},
		{"high then high", `"\ud800\ud800"`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.data))
			if tc.ok != (err == nil) {
				t.Fatalf("Check = %v, want ok %v", err, tc.ok)
			}
			if err == nil {
				return
			}
			if fault.ErrorCode(err) != fault.CodeInvalid {
				t.Fatalf("code %s", fault.ErrorCode(err))
			}
			if tc.field != "" {
				if pe := err.(*fault.Error); pe.Details["field"] != tc.field {
					t.Fatalf("field %v, want %s", pe.Details["field"], tc.field)
				}
			}
		})
	}
}

// TestLocate: a decoding error is prefixed with its line and column; one
// without an offset is left alone.
func TestLocate(t *testing.T) {
	cases := []struct {
		name, data string
		into       any
		want       string // prefix; "" for unchanged
	}{
		{"syntax on line 3", "{\n  \"a\": 1,\n  \"b\" 2\n}", &map[string]any{}, "line 3, column 7: "},
		{"type on line 2", "{\"a\":\n \"x\"}", &struct{ A int }{}, "line 2, column 5: "},
		{"wide characters count once", "{\"é\": 1 2}", &map[string]any{}, "line 1, column 9: "},
		{"unexpected end", "{\"a\": ", &map[string]any{}, "line 1, column 6: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(c.data), c.into)
			if err == nil {
				t.Fatal("no error")
			}
			got := Locate([]byte(c.data), err).Error()
			if c.want == "" {
				if got != err.Error() {
					t.Fatalf("Locate = %q, want %q unchanged", got, err)
				}
				return
			}
			if got != c.want+err.Error() {
				t.Fatalf("Locate = %q, want %q", got, c.want+err.Error())
			}
		})
	}
	plain := errors.New(`json: unknown field "b"`)
	if got := Locate([]byte(`{"b": 1}`), plain); got != plain {
		t.Fatalf("Locate of an error without offset = %v, want it unchanged", got)
	}
}
