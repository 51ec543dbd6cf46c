// Package blocksyntax is the syntax of a block of code: the body of a
// function, written as Starlark statements that may end in `return`, the
// dialect it is parsed with (Options) and its parse (Parse). It is shared
// by the static analysis (signature/) and the sandbox, so both see exactly
// the same program. (A block prepared to run is replay.Block.)
package blocksyntax

import (
	"go.starlark.net/syntax"
)

// FuncName is the name of the function that wraps a block's statements.
const FuncName = "__block__"

// Options returns the Starlark dialect every block is parsed with: sets and
// while loops are allowed (the sandbox's step limit bounds them), recursion is
// not, and load statements are rejected by the callers.
func Options() *syntax.FileOptions {
	return &syntax.FileOptions{
		Set:             true,
		While:           true,
		TopLevelControl: true,
		GlobalReassign:  false,
		Recursion:       false,
	}
}

// Parse parses src as a block and returns a file whose only statement is
// `def __block__(): <the block's statements>`. Positions stay those of src:
// the wrapping happens on the syntax tree, not the text, so line and column
// numbers in errors point into the code as written. The file is not yet
// resolved.
func Parse(filename, src string) (*syntax.File, error) {
	f, err := Options().Parse(filename, src, 0)
	if err != nil {
		return nil, err
	}
	start := syntax.MakePosition(&f.Path, 1, 1)
	def := &syntax.DefStmt{
		Def:    start,
		Name:   &syntax.Ident{NamePos: start, Name: FuncName},
		Lparen: start,
		Rparen: start,
		Body:   f.Stmts,
	}
	if len(def.Body) == 0 {
		def.Body = []syntax.Stmt{&syntax.BranchStmt{Token: syntax.PASS, TokenPos: start}}
	}
	f.Stmts = []syntax.Stmt{def}
	return f, nil
}
