package fields

import (
	"errors"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/fault"
)

// TestCheckString: the Go rule of a string field, by its declaration.
func TestCheckString(t *testing.T) {
	key := Field{Name: "k", Type: String, MaxBytes: 4}
	id := Field{Name: "session_id", Type: String, MinBytes: 1, MaxBytes: 4, NoControl: true}
	cases := []struct {
		name  string
		field Field
		value string
		want  string // "" accepted, else the message
	}{
		{"at the limit", key, "abcd", ""},
		{"multi-byte at the limit", key, "éé", ""},
		{"over in bytes, not in characters", key, "ééa", "k is longer than 4 bytes"},
		{"not UTF-8", key, "a\xffb", "k is not valid UTF-8"},
		{"empty where optional", key, "", ""},
		{"control characters allowed", key, "a\x00", ""},
		{"required and empty", id, "", "session_id is required"},
		{"NUL", id, "a\x00", "session_id must be UTF-8 of at most 4 bytes without control characters"},
		{"DEL", id, "a\x7f", "session_id must be UTF-8 of at most 4 bytes without control characters"},
		{"C1", id, "a\u0085", "session_id must be UTF-8 of at most 4 bytes without control characters"},
		{"no-control over the limit", id, "abcde", "session_id must be UTF-8 of at most 4 bytes without control characters"},
		{"no-control fine", id, "a/é", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.field.CheckString(c.value)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.CodeInvalid || fe.Message != c.want || fe.Details["field"] != c.field.Name {
				t.Fatalf("got %v, want invalid_request %q on %s", err, c.want, c.field.Name)
			}
		})
	}
}

// TestSchema: a body's schema in the fixed key order, null allowed where
// Nullable, descriptions only when asked.
func TestSchema(t *testing.T) {
	body := Body(Req(Field{Name: "n", Type: String, MinBytes: 1, MaxBytes: 8, Doc: "a name"}),
		Nullable(Field{Name: "w", Type: Integer, Min: Int(0), Max: Int(60)}),
		Opt(Field{Name: "xs", Type: Array, Items: &Field{Type: String, NoControl: true}, MaxItems: 2}))
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"without docs", Options{}, `{"type":"object","additionalProperties":false,"required":["n"],"properties":{` +
			`"n":{"type":"string","minLength":1,"maxLength":8},"w":{"type":["integer","null"],"minimum":0,"maximum":60},` +
			`"xs":{"type":"array","items":{"type":"string","pattern":"^[^\\x00-\\x1f\\x7f-\\x9f]*$"},"maxItems":2}}}`},
		{"with docs", Options{Docs: true}, `{"type":"object","additionalProperties":false,"required":["n"],"properties":{` +
			`"n":{"type":"string","minLength":1,"maxLength":8,"description":"a name"},"w":{"type":["integer","null"],"minimum":0,"maximum":60},` +
			`"xs":{"type":"array","items":{"type":"string","pattern":"^[^\\x00-\\x1f\\x7f-\\x9f]*$"},"maxItems":2}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := string(body.Schema(c.o)); got != c.want {
				t.Fatalf("schema\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestCheck: a decoded document's strings are checked by their
// declarations, named by their dotted paths; undeclared or null values
// are left to the schema.
func TestCheck(t *testing.T) {
	body := Body(Nullable(Cause), Opt(Field{Name: "tools", Type: Array, Items: &Tool}))
	long := strings.Repeat("é", MaxKeyBytes/2+1)
	for _, c := range []struct {
		name  string
		doc   map[string]any
		field string // "" accepted
	}{
		{"nested", map[string]any{"cause": map[string]any{"name": long}}, "cause.name"},
		{"in an array", map[string]any{"tools": []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "description": strings.Repeat("é", MaxToolDescBytes/2+1)}}}, "tools.1.description"},
		{"null", map[string]any{"cause": nil}, ""},
		{"within", map[string]any{"cause": map[string]any{"name": strings.Repeat("é", MaxKeyBytes/2), "description": nil}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := body.Check(c.doc)
			var fe *fault.Error
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field != "" && (!errors.As(err, &fe) || fe.Details["field"] != c.field):
				t.Fatalf("got %v, want a refusal of %s", err, c.field)
			}
		})
	}
}
