// Package schemas holds the JSON Schema rules the domain and its callers
// share, a leaf below procedures: a procedure's input schema
// (InputSchema), compiling a schema (CompileSchema) and its cache key
// (SchemaKey), and what a caller may be told of a value a schema refuses
// (SchemaViolations, ViolationOf, SchemaMessage: the keyword and where,
// never the value).
package schemas
