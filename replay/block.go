package replay

import (
	"context"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// Block is a block of code prepared to run — the one prepared-block type
// of the module: what the one pipeline makes of code, a dialect and
// arguments, in this order — the dialect and the analysis (analyse), the
// classification (from the stored procedure, the store's current
// catalogue or a catalogue file), the input schema typed from the
// catalogue, and the arguments validated against it and bound
// (Block.bind). Every path that runs or describes code goes through it:
// an invoke's stored version (Replayer.prepare), a turn
// (Replayer.PrepareBlock, prepared once at submit and carried through its
// resolution and run: Replayer.Recheck), `procgraph run` (RunFile) and
// `procgraph signature` (FileBlock, which stops before the arguments).
type Block struct {
	Dialect  signature.Dialect
	Analysis *signature.Analysis
	// Name is the name the block runs and is recorded under.
	Name string
	// Classified is the block's classification under the catalogue it was
	// prepared with (Class) and that catalogue (Catalogue: its tool calls'
	// arguments are checked against their input_schema in it at call
	// time, argsCheck) on every path; for a turn's block (PrepareBlock),
	// also the stored procedures its proc__ entries name (Refs) and the
	// binding an authorization given now binds it to (Binding).
	procedures.Classified
	// Arguments are the arguments as validated (JSON-normalised); Args the
	// block's parameters bound from them.
	Arguments, Args map[string]any
}

// analyse is the pipeline's first step: the dialect, then the static
// analysis, named as the analysis names it (signature.Name). Its errors
// are *signature.Error, the dialect's too (Feature "dialect");
// analysisError turns them into what a caller is told.
func analyse(code, dialect string) (*Block, error) {
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return nil, err
	}
	a, err := signature.Analyze(code, d)
	if err != nil {
		return nil, err
	}
	return &Block{Dialect: d, Analysis: a, Name: a.Name}, nil
}

// analysisError is Analyse's error as a request's: CodeInvalid (field
// dialect) for an unknown dialect, else procedures.CodeError
// (CodeInvalidCode, CodeTooLarge).
func analysisError(err error, dialect string) error {
	var se *signature.Error
	if errors.As(err, &se) && se.Feature == "dialect" {
		return fault.Errorf(fault.CodeInvalid, "dialect %q is not starlark or python-async", dialect).WithDetails("field", "dialect")
	}
	return procedures.CodeError(err)
}

// FileBlock prepares a block without a store, up to its arguments: the
// analysis, the classification against cat (nil is an empty catalogue)
// and the name it is captured under with that catalogue (the first of
// signature.Names). Errors are analyse's.
func FileBlock(code, dialect string, cat *procedures.Catalogue) (*Block, error) {
	b, err := analyse(code, dialect)
	if err != nil {
		return nil, err
	}
	sig := b.Analysis.Signature
	b.Name, b.Class, b.Catalogue = signature.Names(sig, cat.Has)[0], procedures.Classify(sig, cat, nil), cat
	return b, nil
}

// PrepareBlock prepares a block an agent submits (a turn) under the
// current catalogue: analyse, the store's classification
// (procedures.Service.ClassifyBlock: the stored procedures named, the
// binding), the input schema typed from the catalogue
// (procedures.TypedSchema; the untyped one as fallback), the arguments.
// A turn's block is prepared once, when it is submitted; its resolution
// and run recheck it (Recheck). Errors: CodeInvalid (dialect),
// CodeInvalidCode, CodeTooLarge, CodeInvalidArguments, and the store's.
func (r *Replayer) PrepareBlock(ctx context.Context, code, dialect string, args map[string]any) (*Block, error) {
	r.preparations.Add(1)
	b, err := r.analyses.analyse(code, dialect)
	if err != nil {
		return nil, analysisError(err, dialect)
	}
	a := b.Analysis
	c, err := r.svc.ClassifyBlock(ctx, a)
	if err != nil {
		return nil, err
	}
	b.Classified = *c
	typed, _ := procedures.TypedSchema(nil, a.Parameters, a.Flows, c.Catalogue)
	schema, err := r.schemas.getTyped(a.CodeHash, a.Parameters, typed, nil)
	if err != nil {
		return nil, err
	}
	if err := b.bind(schema, args); err != nil {
		return nil, err
	}
	return b, nil
}

// Recheck returns b, a turn's block PrepareBlock prepared earlier, as
// preparing it again now would make it, without preparing it again: b
// classified anew under the current catalogue and store
// (procedures.Service.ClassifyBlock of its analysis: its Class, Refs,
// Binding and Catalogue as they are now), when what b's binding holds is
// unchanged (binding.Binding.Check: its nested procedures, its
// classification, its tools' contracts). Then its analysis, its schema
// and its arguments stand: the schema is typed only from the input
// schemas of the tools its parameters flow into — signature tools, whose
// schema hashes the binding holds — and the arguments were validated
// against it. ok is false when the binding changed: the caller prepares
// the block again (PrepareBlock), whose answer (arguments that no longer
// fit, say) is the one to give. The returned block is a copy; b is not
// changed. Errors are the store's.
func (r *Replayer) Recheck(ctx context.Context, b *Block) (now *Block, ok bool, err error) {
	if b.Binding == nil {
		return nil, false, nil
	}
	c, err := r.svc.ClassifyBlock(ctx, b.Analysis)
	if err != nil {
		return nil, false, err
	}
	// The program b's hashes fix is the one its key names (a key is
	// computed by the gate on the block as rechecked, as on one prepared).
	bound := *c.Binding
	bound.Program = b.Binding.Program
	if b.Binding.Check(&bound) != "" {
		return nil, false, nil
	}
	nb := *b
	nb.Classified = *c
	return &nb, true, nil
}

// bind is the pipeline's last step: args JSON-normalised, validated
// against schema (CodeInvalidArguments) and bound to the block's
// parameters.
func (b *Block) bind(schema *jsonschema.Schema, args map[string]any) error {
	norm, err := normalizeArguments(args)
	if err != nil {
		return err
	}
	if err := validateArguments(b.Name, schema, norm); err != nil {
		return err
	}
	bound, err := bindArguments(b.Analysis.Parameters, norm)
	if err != nil {
		return err
	}
	b.Arguments, b.Args = norm, bound
	return nil
}
