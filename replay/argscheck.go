package replay

import (
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/schemas"
)

// argsCheck is the call-time check of a run's tool calls (docs/design.md:
// arguments are checked against the tool's input_schema at call time): the
// sandbox's parent calls it for every call the allow-set admitted, before
// the dispatcher. A call whose arguments break the input_schema of its
// tool in cat (the catalogue the run was decided with) is refused as
// invalid_arguments, told by the schema's keyword and locations only
// (schemas.SchemaViolations), never a value. Nested proc__ calls are
// checked by their own replay against their typed schema. The schemas are
// compiled once per catalogue revision (procedures.ToolInputSchema).
type argsCheck struct {
	cat *procedures.Catalogue
}

// checkArgsIn returns the ArgsChecker of a run decided with cat.
func checkArgsIn(cat *procedures.Catalogue) sandbox.ArgsChecker { return argsCheck{cat: cat} }

// CheckArgs implements sandbox.ArgsChecker. It fails closed: a tool the
// catalogue does not have, or whose schema does not compile, is refused.
func (c argsCheck) CheckArgs(tool string, args map[string]any) *sandbox.Error {
	if procedures.IsProcName(tool) {
		return nil
	}
	s, known, err := procedures.ToolInputSchema(c.cat, tool)
	switch {
	case !known:
		return refused(tool, "tools.%s is not in the catalogue the run was decided with", tool)
	case err != nil:
		return refused(tool, "the input_schema of tools.%s in the catalogue does not compile", tool)
	case s == nil:
		return nil
	}
	norm, nerr := jsonvalue.Numbers(args)
	obj, ok := norm.(map[string]any)
	if nerr != nil || !ok {
		return &sandbox.Error{Code: sandbox.InvalidArguments, Tool: tool, Message: "the arguments of tools." + tool + " are not a JSON object"}
	}
	if err := s.Validate(obj); err != nil {
		return &sandbox.Error{Code: sandbox.InvalidArguments, Tool: tool,
			Message: "the arguments of tools." + tool + " break its input_schema: " + schemas.SchemaMessage(schemas.SchemaViolations(err))}
	}
	return nil
}
