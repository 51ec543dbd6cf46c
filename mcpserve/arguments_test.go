package mcpserve

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/procgraph/procgraph/fault"
)

func TestDecodeArguments(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want map[string]any // nil: refused as invalid_request naming arguments
	}{
		{"nothing", "", map[string]any{}},
		{"null", " null ", map[string]any{}},
		{"empty object", "{}", map[string]any{}},
		{"integers stay exact", `{"id": 9007199254740993, "f": 1.5}`, map[string]any{"id": json.Number("9007199254740993"), "f": json.Number("1.5")}},
		{"array", `[1]`, nil},
		{"string", `"x"`, nil},
		{"trailing value", `{} {}`, nil},
		{"trailing bracket", `{"a":1} ]`, nil},
		{"malformed", `{"a":`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeArguments(json.RawMessage(tc.raw))
			if tc.want == nil {
				if fault.ErrorCode(err) != fault.CodeInvalid {
					t.Fatalf("decodeArguments(%q) = %v, %v; want invalid_request", tc.raw, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decodeArguments(%q) = %#v, %v; want %#v", tc.raw, got, err, tc.want)
			}
		})
	}
}
