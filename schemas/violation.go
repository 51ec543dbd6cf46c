package schemas

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// SchemaViolation is one way a JSON value fails a JSON Schema, told
// without the value: where in the value (Path, a JSON pointer whose
// segments the schema does not name are "*"), which keyword refused it and
// where that keyword is in the schema (KeywordLocation). Nothing in it
// comes from the value but array indexes and the names of properties the
// schema declares: a value, a key the schema does not declare, a length or
// a count never appears (the validator's own messages quote them).
type SchemaViolation struct {
	Path            string `json:"path"`
	Keyword         string `json:"keyword"`
	KeywordLocation string `json:"keyword_location"`
	Message         string `json:"message"`
}

// SchemaViolations is the one home that turns a schema validation error
// into what a caller may be told (docs/design.md "Errors never carry
// values"): its innermost causes as SchemaViolation, sorted by path; one
// violation at the root, keyword "schema", for an error that is not a
// validation error. nil for nil.
func SchemaViolations(err error) []SchemaViolation {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []SchemaViolation{{Path: "", Keyword: "schema", Message: "cannot be validated"}}
	}
	var out []SchemaViolation
	var leaves func(*jsonschema.ValidationError)
	leaves = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, ViolationOf(e))
		}
		for _, c := range e.Causes {
			leaves(c)
		}
	}
	leaves(ve)
	if len(out) == 0 {
		out = append(out, ViolationOf(ve))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// SchemaMessage is the first of vs as one line ("/task_id: fails maximum
// (/properties/task_id/maximum)"), with "(and N more)" when there are more;
// "" for none.
func SchemaMessage(vs []SchemaViolation) string {
	if len(vs) == 0 {
		return ""
	}
	s := vs[0].Message
	if vs[0].Path != "" {
		s = vs[0].Path + ": " + s
	}
	if len(vs) > 1 {
		s += " (and " + strconv.Itoa(len(vs)-1) + " more)"
	}
	return s
}

// ViolationOf tells one leaf of a validation error from its locations
// (SchemaViolations' rule, for a caller that walks the error itself).
func ViolationOf(e *jsonschema.ValidationError) SchemaViolation {
	kw := strings.Split(strings.TrimPrefix(e.KeywordLocation, "/"), "/")
	if e.KeywordLocation == "" {
		kw = nil
	}
	v := SchemaViolation{Path: instancePath(kw, e.InstanceLocation), Keyword: keywordOf(kw), KeywordLocation: e.KeywordLocation}
	v.Message = "fails " + v.Keyword
	if v.KeywordLocation != "" {
		v.Message += " (" + v.KeywordLocation + ")"
	}
	if namesOnly[v.Keyword] {
		v.Message += ": " + e.Message
	}
	return v
}

// namesOnly are the keywords whose validator message names only what the
// schema declares and JSON types ("expected string, but got number";
// "missing properties: 'task_id'"), never a value: it is passed on.
var namesOnly = map[string]bool{"type": true, "required": true}

// keywordOf is the keyword a keyword location ends in: its last segment,
// or the keyword before a property name and index (dependentRequired/a/0);
// "false" for a schema that allows nothing (a location that ends in a
// subschema).
func keywordOf(kw []string) string {
	switch n := len(kw); {
	case n > 0 && assertions[kw[n-1]]:
		return kw[n-1]
	case n > 2 && (kw[n-3] == "dependentRequired" || kw[n-3] == "dependencies"):
		return kw[n-3]
	}
	return "false"
}

// assertions are the keywords that refuse a value (draft 2020-12 and the
// older ones the validator reads).
var assertions = map[string]bool{
	"type": true, "const": true, "enum": true, "format": true, "minProperties": true, "maxProperties": true,
	"required": true, "additionalProperties": true, "dependencies": true, "dependentRequired": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "additionalItems": true, "minContains": true,
	"maxContains": true, "contains": true, "minLength": true, "maxLength": true, "pattern": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true, "minimum": true,
	"exclusiveMinimum": true, "maximum": true, "exclusiveMaximum": true, "multipleOf": true, "not": true,
	"anyOf": true, "oneOf": true, "allOf": true, "then": true, "else": true, "propertyNames": true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "patternProperties": true,
}

// instancePath is loc (a JSON pointer into the value) with every segment
// the schema does not name replaced by "*": it walks the keyword location
// kw beside it, and a segment is kept only where kw descends through
// "properties" NAME (then it is NAME, from the schema) or an items keyword
// (an array index); a key reached through additionalProperties,
// patternProperties and the like is the value's, and is not shown.
func instancePath(kw []string, loc string) string {
	if loc == "" {
		return ""
	}
	segs := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	out := make([]string, len(segs))
	for i := range out {
		out[i] = "*"
	}
	n := 0 // instance segments accounted for
	for i := 0; i < len(kw) && n < len(segs); i++ {
		switch kw[i] {
		case "properties":
			if i+1 < len(kw) && kw[i+1] == segs[n] {
				out[n] = segs[n]
			}
			n, i = n+1, i+1
		case "patternProperties":
			n, i = n+1, i+1 // the key matched a pattern: the value's, it stays "*"
		case "additionalProperties", "unevaluatedProperties", "propertyNames":
			n++
		case "items", "additionalItems", "unevaluatedItems", "contains":
			if isIndex(segs[n]) {
				out[n] = segs[n]
			}
			n++
		case "prefixItems":
			if isIndex(segs[n]) {
				out[n] = segs[n]
			}
			n, i = n+1, i+1
		case "$defs", "definitions", "allOf", "anyOf", "oneOf", "dependencies", "dependentRequired", "dependentSchemas":
			i++ // a name or an index of the schema's: the same value
		}
	}
	return "/" + strings.Join(out, "/")
}

func isIndex(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
