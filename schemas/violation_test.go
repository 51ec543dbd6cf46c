package schemas_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/schemas"
)

// TestSchemaViolationsQuoteNoValue: for every keyword whose validator
// message quotes the instance (or its length, a key, a count), the
// violations and their message name the keyword and where, and hold none
// of the value's text. The secret text is in every value: as a number
// (8675309), in a string, in a key.
func TestSchemaViolationsQuoteNoValue(t *testing.T) {
	const num, word = "8675309", "s3cr3t"
	cases := []struct {
		keyword, schema, value, path string
	}{
		{"maximum", `{"maximum": 100}`, num, ""},
		{"minimum", `{"minimum": 9000000}`, num, ""},
		{"exclusiveMaximum", `{"exclusiveMaximum": 100}`, num, ""},
		{"exclusiveMinimum", `{"exclusiveMinimum": 9000000}`, num, ""},
		{"multipleOf", `{"multipleOf": 2}`, num, ""},
		{"enum", `{"enum": [1, 2]}`, num, ""},
		{"const", `{"const": 1}`, num, ""},
		{"type", `{"type": "string"}`, num, ""},
		{"pattern", `{"pattern": "^a"}`, `"s3cr3t-8675309"`, ""},
		{"minLength", `{"minLength": 100}`, `"s3cr3t-8675309"`, ""},
		{"maxLength", `{"maxLength": 3}`, `"s3cr3t-8675309"`, ""},
		{"format", `{"format": "email"}`, `"s3cr3t-8675309"`, ""},
		{"contentEncoding", `{"contentEncoding": "base64"}`, `"s3cr3t-8675309!"`, ""},
		{"minItems", `{"minItems": 5}`, `["s3cr3t", 8675309]`, ""},
		{"maxItems", `{"maxItems": 1}`, `["s3cr3t", 8675309]`, ""},
		{"uniqueItems", `{"uniqueItems": true}`, `["s3cr3t8675309", "s3cr3t8675309"]`, ""},
		{"type", `{"contains": {"type": "string"}}`, `[8675309]`, "/0"},
		{"maximum", `{"items": {"maximum": 100}}`, `[1, 8675309]`, "/1"},
		{"required", `{"required": ["pin"]}`, `{"s3cr3t": 8675309}`, ""},
		{"additionalProperties", `{"properties": {"pin": {}}, "additionalProperties": false}`, `{"s3cr3t8675309": 1}`, ""},
		{"type", `{"additionalProperties": {"type": "string"}}`, `{"s3cr3t8675309": 1}`, "/*"},
		{"type", `{"patternProperties": {"^s": {"type": "string"}}}`, `{"s3cr3t8675309": 1}`, "/*"},
		{"maxLength", `{"propertyNames": {"maxLength": 3}}`, `{"s3cr3t8675309": 1}`, "/*"},
		{"maxProperties", `{"maxProperties": 0}`, `{"s3cr3t8675309": 1}`, ""},
		{"minProperties", `{"minProperties": 5}`, `{"s3cr3t8675309": 1}`, ""},
		{"dependentRequired", `{"dependentRequired": {"a": ["b"]}}`, `{"a": "s3cr3t8675309"}`, ""},
		{"not", `{"not": {"type": "integer"}}`, num, ""},
		{"maximum", `{"anyOf": [{"maximum": 1}, {"minimum": 9000000}]}`, num, ""},
		{"maximum", `{"properties": {"pin": {"maximum": 100}}}`, `{"pin": 8675309}`, "/pin"},
		{"maximum", `{"$defs": {"p": {"maximum": 100}}, "properties": {"pin": {"$ref": "#/$defs/p"}}}`, `{"pin": 8675309}`, "/pin"},
	}
	for _, tc := range cases {
		t.Run(tc.keyword+" "+tc.schema, func(t *testing.T) {
			c := jsonschema.NewCompiler()
			c.Draft, c.AssertFormat, c.AssertContent = jsonschema.Draft2020, true, true
			if err := c.AddResource("s.json", strings.NewReader(tc.schema)); err != nil {
				t.Fatal(err)
			}
			s, err := c.Compile("s.json")
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader([]byte(tc.value)))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			verr := s.Validate(v)
			if verr == nil {
				t.Fatal("the value passes")
			}
			vs := schemas.SchemaViolations(verr)
			b, _ := json.Marshal(vs)
			told := string(b) + " " + schemas.SchemaMessage(vs)
			if strings.Contains(told, num) || strings.Contains(told, word) {
				t.Fatalf("told %s: it quotes the value", told)
			}
			found := false
			for _, v := range vs {
				if v.Keyword == tc.keyword && v.Path == tc.path && strings.Contains(v.Message, tc.keyword) {
					found = true
				}
			}
			if !found {
				t.Fatalf("told %s, want keyword %s at %q", told, tc.keyword, tc.path)
			}
		})
	}
}
