// Package fields declares each request field procgraph accepts once, as a
// Go value: its JSON name, type, bounds, pattern and description. The HTTP
// request bodies' JSON Schemas and OpenAPI (api), the MCP tools' input
// schemas (mcpserve) are generated from these values (Field.Schema), the
// edges check the bounds a JSON Schema cannot (Field.Check), and the domain
// (procedures, replay) reads the same constants, so a bound is written
// once. String bounds count bytes of UTF-8; the published maxLength is the
// same number, which a character count can only approximate from above
// (docs/adr/0018-one-request-schema.md). A leaf: it imports only fault.
package fields

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/procgraph/procgraph/fault"
)

// Type is a JSON Schema type.
type Type string

// The JSON Schema types a request field has.
const (
	String  Type = "string"
	Integer Type = "integer"
	Boolean Type = "boolean"
	Object  Type = "object"
	Array   Type = "array"
)

// Field is one request field: what its schema says and what the Go check
// enforces, from the same values.
type Field struct {
	// Name is the field's JSON name ("" for an array's items or a body).
	Name string
	Type Type
	// Enum lists a string's allowed values.
	Enum []string
	// MinBytes and MaxBytes bound a string in bytes of UTF-8 (MaxBytes 0:
	// no bound here); published as minLength and maxLength.
	MinBytes, MaxBytes int
	// NoControl refuses control characters (unicode.IsControl), published
	// as Pattern NoControlPattern.
	NoControl bool
	// Min and Max bound an integer (nil: no bound).
	Min, Max *int
	// Items is an array's element; MaxItems bounds its length (0: none).
	Items    *Field
	MaxItems int
	// Props are an object's properties; with them the object is closed
	// (additionalProperties false). Nil: any object.
	Props []Prop
	// Doc is the field's description (the MCP tools' schemas carry it).
	Doc string
}

// Prop is a Field as a property of an object: required or not, and whether
// null is allowed too (the HTTP bodies' optional fields).
type Prop struct {
	Field
	Required bool
	Null     bool
}

// NoControlPattern is the pattern of a NoControl string: no C0 control,
// DEL or C1 control (what unicode.IsControl reports), written so that
// ECMA-262, RE2 and Python read it alike.
const NoControlPattern = `^[^\x00-\x1f\x7f-\x9f]*$`

// Int is n as a bound of Field.Min or Field.Max.
func Int(n int) *int { return &n }

// Body is a closed object of props: a request body or a tool's input.
func Body(props ...Prop) Field { return Field{Type: Object, Props: props} }

// Opt is f as an optional property.
func Opt(f Field) Prop { return Prop{Field: f} }

// Req is f as a required property.
func Req(f Field) Prop { return Prop{Field: f, Required: true} }

// Nullable is f as an optional property that may also be null.
func Nullable(f Field) Prop { return Prop{Field: f, Null: true} }

// NonEmpty is f with at least one byte.
func (f Field) NonEmpty() Field {
	f.MinBytes = max(f.MinBytes, 1)
	return f
}

// Named is f under another name (the same bounds).
func (f Field) Named(name string) Field {
	f.Name = name
	return f
}

// Described is f with description doc.
func (f Field) Described(doc string) Field {
	f.Doc = doc
	return f
}

// Options say how a schema is written.
type Options struct {
	// Docs writes each field's description.
	Docs bool
}

// Schema is f's JSON Schema (draft 2020-12), compact, its keys in a fixed
// order: type, additionalProperties, required, properties, items,
// maxItems, enum, minLength, maxLength, pattern, minimum, maximum,
// description.
func (f Field) Schema(o Options) json.RawMessage {
	var b bytes.Buffer
	f.write(&b, false, o)
	return b.Bytes()
}

func (f Field) write(b *bytes.Buffer, null bool, o Options) {
	first := true
	key := func(k string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
	}
	b.WriteByte('{')
	key("type")
	if null {
		writeJSON(b, []string{string(f.Type), "null"})
	} else {
		writeJSON(b, string(f.Type))
	}
	if f.Type == Object && f.Props != nil {
		key("additionalProperties")
		b.WriteString("false")
		var req []string
		for _, p := range f.Props {
			if p.Required {
				req = append(req, p.Name)
			}
		}
		if len(req) > 0 {
			key("required")
			writeJSON(b, req)
		}
		key("properties")
		b.WriteByte('{')
		for i, p := range f.Props {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, p.Name)
			b.WriteByte(':')
			p.Field.write(b, p.Null, o)
		}
		b.WriteByte('}')
	}
	if f.Items != nil {
		key("items")
		f.Items.write(b, false, o)
	}
	if f.MaxItems > 0 {
		key("maxItems")
		writeJSON(b, f.MaxItems)
	}
	if len(f.Enum) > 0 {
		key("enum")
		writeJSON(b, f.Enum)
	}
	if f.MinBytes > 0 {
		key("minLength")
		writeJSON(b, f.MinBytes)
	}
	if f.MaxBytes > 0 {
		key("maxLength")
		writeJSON(b, f.MaxBytes)
	}
	if f.NoControl {
		key("pattern")
		writeJSON(b, NoControlPattern)
	}
	if f.Min != nil {
		key("minimum")
		writeJSON(b, *f.Min)
	}
	if f.Max != nil {
		key("maximum")
		writeJSON(b, *f.Max)
	}
	if o.Docs && f.Doc != "" {
		key("description")
		writeJSON(b, f.Doc)
	}
	b.WriteByte('}')
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)       // strings, ints and their slices always encode
	b.Truncate(b.Len() - 1) // Encode's newline
}

// CheckString is the Go rule of a string field: at most MaxBytes bytes of
// UTF-8, at least MinBytes, no control characters when NoControl. It
// returns fault.CodeInvalid naming the field (details field).
func (f Field) CheckString(s string) error {
	return f.checkString(f.Name, s)
}

// IsLine reports whether s is valid UTF-8 without a control character
// (unicode.IsControl, line breaks included): the rule of NoControl, which
// the audit rule applies to what a record names too.
func IsLine(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// CheckStringAt is CheckString naming the field path in its error (a
// field nested in another: "cause.name").
func (f Field) CheckStringAt(path, s string) error {
	return f.checkString(path, s)
}

func (f Field) checkString(path, s string) error {
	bad := func(format string, args ...any) error {
		return fault.Errorf(fault.CodeInvalid, "%s "+format, append([]any{path}, args...)...).WithDetails("field", path)
	}
	switch {
	case s == "" && f.MinBytes > 0:
		return bad("is required")
	case f.NoControl && (f.MaxBytes > 0 && len(s) > f.MaxBytes || !IsLine(s)):
		return bad("must be UTF-8 of at most %d bytes without control characters", f.MaxBytes)
	case f.MaxBytes > 0 && len(s) > f.MaxBytes:
		return bad("is longer than %d bytes", f.MaxBytes)
	case !utf8.ValidString(s):
		return bad("is not valid UTF-8")
	case len(s) < f.MinBytes:
		return bad("is shorter than %d bytes", f.MinBytes)
	}
	return nil
}

// Check applies the Go rule of every string f declares to v, a decoded
// JSON value that already passed f's schema (which checked types, enums,
// integer bounds and item counts exactly, and lengths in characters). It
// returns the first problem as fault.CodeInvalid naming the field by its
// dotted path ("cause.name", "tools.3.description").
func (f Field) Check(v any) error {
	return f.check("", v)
}

func (f Field) check(path string, v any) error {
	switch x := v.(type) {
	case string:
		if f.Type == String {
			return f.checkString(path, x)
		}
	case map[string]any:
		for _, p := range f.Props {
			if pv, ok := x[p.Name]; ok && pv != nil {
				if err := p.Field.check(join(path, p.Name), pv); err != nil {
					return err
				}
			}
		}
	case []any:
		if f.Items != nil {
			for i, item := range x {
				if err := f.Items.check(join(path, strconv.Itoa(i)), item); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Walk calls fn for f and every field inside it, with its dotted path
// (array items as "[]").
func (f Field) Walk(fn func(path string, f Field)) {
	f.walk("", fn)
}

func (f Field) walk(path string, fn func(string, Field)) {
	fn(path, f)
	for _, p := range f.Props {
		p.Field.walk(join(path, p.Name), fn)
	}
	if f.Items != nil {
		f.Items.walk(join(path, "[]"), fn)
	}
}
