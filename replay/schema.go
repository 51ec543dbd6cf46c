package replay

import (
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/cache"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/schemas"
)

// maxCachedSchemas bounds the compiled-schema cache (least recently used
// entries go).
const maxCachedSchemas = 4096

// schemaCache holds compiled input schemas by code hash and schema: a code
// hash names one version, whose parameters never change; its schema is
// typed from the current catalogue (procedures.TypedSchema), so it is part
// of the key.
type schemaCache struct {
	m *cache.Cache[string, *jsonschema.Schema]
}

// newSchemaCache returns an empty schemaCache.
func newSchemaCache() *schemaCache {
	return &schemaCache{m: cache.New[string, *jsonschema.Schema](maxCachedSchemas)}
}

// compileInputSchema compiles InputSchema(parameters, supplied).
func compileInputSchema(parameters []string, supplied map[string]any) (*jsonschema.Schema, error) {
	schema, err := schemas.InputSchema(parameters, supplied)
	if err != nil {
		return nil, err
	}
	return schemas.CompileSchema(schema)
}

// get returns the compiled schema of the version codeHash, compiling
// InputSchema(parameters, supplied) on a miss.
func (c *schemaCache) get(codeHash string, parameters []string, supplied map[string]any) (*jsonschema.Schema, error) {
	key := codeHash + "\x00" + schemas.SchemaKey(supplied)
	if s, ok := c.m.Get(key); ok {
		return s, nil
	}
	s, err := compileInputSchema(parameters, supplied)
	if err != nil {
		return nil, err
	}
	c.m.Add(key, s)
	return s, nil
}

// getTyped returns the compiled schema of the version codeHash typed from
// the catalogue (typed, procedures.TypedSchema) or, should that not
// compile, the one fallback reads (the version's own, which still guards
// the call; nil: none).
func (c *schemaCache) getTyped(codeHash string, parameters []string, typed map[string]any, fallback func() (map[string]any, error)) (*jsonschema.Schema, error) {
	s, err := c.get(codeHash, parameters, typed)
	if err != nil && fallback != nil {
		var base map[string]any
		if base, err = fallback(); err == nil {
			s, err = c.get(codeHash, parameters, base)
		}
	}
	return s, err
}

// ArgumentError is one argument that fails the input schema, told
// without its value (schemas.SchemaViolation).
type ArgumentError = schemas.SchemaViolation

// normalizeArguments returns args as JSON would carry them (numbers as
// json.Number, so integers stay exact), nil as an empty object.
func normalizeArguments(args map[string]any) (map[string]any, error) {
	if args == nil {
		return map[string]any{}, nil
	}
	notJSON := func() error {
		return fault.Errorf(fault.CodeInvalidArguments, "arguments are not a JSON object").
			WithDetails("errors", []ArgumentError{{Path: "", Keyword: "type", Message: "arguments are not a JSON object"}})
	}
	x, err := jsonvalue.Numbers(args)
	out, ok := x.(map[string]any)
	if err != nil || !ok {
		return nil, notJSON()
	}
	return out, nil
}

// bindArguments returns the values of params in args (normalized) as the
// sandbox takes them (jsonvalue.Plain). A number out of float64's range is
// CodeInvalidArguments.
func bindArguments(params []string, args map[string]any) (map[string]any, error) {
	bound := make(map[string]any, len(params))
	for _, p := range params {
		v, err := jsonvalue.Plain(args[p])
		if err != nil {
			return nil, fault.Errorf(fault.CodeInvalidArguments, "argument %s is a number out of range", p).
				WithDetails("errors", []ArgumentError{{Path: "/" + p, Keyword: "type", Message: "a number out of range"}})
		}
		bound[p] = v
	}
	return bound, nil
}

// validateArguments checks args (normalized) against schema. A failure is a
// CodeInvalidArguments error whose details "errors" lists every failing value
// ([]ArgumentError, sorted by path); neither it nor the message quotes a
// value (schemas.SchemaViolations).
func validateArguments(name string, schema *jsonschema.Schema, args map[string]any) error {
	err := schema.Validate(args)
	if err == nil {
		return nil
	}
	list := schemas.SchemaViolations(err)
	return fault.Errorf(fault.CodeInvalidArguments, "arguments of %s do not match its input schema: %s", name, schemas.SchemaMessage(list)).
		WithDetails("errors", list)
}
