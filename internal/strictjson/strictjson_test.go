package strictjson

import (
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
