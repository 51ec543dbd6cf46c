package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/jsonvalue"
)

// InputSchema returns the JSON Schema of a procedure's arguments: supplied,
// when a capture gave one, made to require every parameter; else an object
// schema with one property per parameter, all required. Returns fault.CodeInvalid
// for a supplied schema that is not an object schema or does not compile.
func InputSchema(parameters []string, supplied map[string]any) (map[string]any, error) {
	if supplied == nil {
		props := make(map[string]any, len(parameters))
		for _, p := range parameters {
			props[p] = map[string]any{}
		}
		return map[string]any{
			"type":                 "object",
			"properties":           props,
			"required":             jsonvalue.Strings(parameters),
			"additionalProperties": false,
		}, nil
	}
	schema, err := jsonvalue.Clone(supplied)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "params_schema is not JSON: %v", err).WithDetails("field", "params_schema")
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return nil, fault.Errorf(fault.CodeInvalid, "params_schema must have type object").WithDetails("field", "params_schema")
	}
	schema["type"] = "object"
	required := map[string]bool{}
	if r, ok := schema["required"].([]any); ok {
		for _, v := range r {
			if s, ok := v.(string); ok {
				required[s] = true
			}
		}
	} else if _, present := schema["required"]; present {
		return nil, fault.Errorf(fault.CodeInvalid, "params_schema.required must be an array of names").WithDetails("field", "params_schema")
	}
	for _, p := range parameters {
		required[p] = true
	}
	names := make([]string, 0, len(required))
	for n := range required {
		names = append(names, n)
	}
	sort.Strings(names)
	schema["required"] = jsonvalue.Strings(names)
	if _, err := CompileSchema(schema); err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "params_schema does not compile: %v", err).WithDetails("field", "params_schema")
	}
	return schema, nil
}

// CompileSchema compiles a JSON Schema held as a JSON-like map.
func CompileSchema(schema map[string]any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("remote $ref %q is not allowed", url)
	}
	if err := c.AddResource("input.json", bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return c.Compile("input.json")
}

// SchemaKey is a stable key of a JSON-like schema (its JSON, keys sorted):
// what caches of compiled schemas key on.
func SchemaKey(schema map[string]any) string {
	b, err := json.Marshal(schema)
	if err != nil {
		return ""
	}
	return string(b)
}
