package procedures

import (
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/schemas"
)

// toolSchema is a catalogue tool's compiled input schema (nil: the tool
// has none, or is not in the catalogue: known false).
type toolSchema struct {
	schema *jsonschema.Schema
	known  bool
	err    error
}

// newToolSchema compiles tool's input schema in cat (kept by the
// catalogue: Catalogue.toolSchema, shared by the call-time check of every
// run and by verification).
func newToolSchema(cat *Catalogue, tool, _ string) *toolSchema {
	t, ok := cat.Tool(tool)
	if !ok {
		return &toolSchema{}
	}
	ts := &toolSchema{known: true}
	if len(t.InputSchema) > 0 {
		ts.schema, ts.err = schemas.CompileSchema(t.InputSchema)
	}
	return ts
}

// ToolInputSchema returns the compiled input_schema of the catalogue tool
// tool (nil when the tool has none), compiled once per catalogue
// revision. known is false for a tool cat does not have; err is the
// compiler's when the schema does not compile.
func ToolInputSchema(cat *Catalogue, tool string) (s *jsonschema.Schema, known bool, err error) {
	if cat == nil {
		return nil, false, nil
	}
	ts := cat.toolSchema(tool)
	return ts.schema, ts.known, ts.err
}
