// Package signature is the static analysis of a procedure block: it parses a
// block (the body of a function, see internal/blocksyntax), rewrites the
// python-async dialect into Starlark, and computes the procedure's tool-call
// signature, name, code hash, parameters, nested proc__ references and
// opacity. It does no I/O and never runs the code.
//
// # Signature and opacity
//
// The block is parsed with blocksyntax.Parse (so the analysis sees exactly the
// program the sandbox runs) and resolved with go.starlark.net/resolve, every
// free name being predeclared. The signature is the sorted, de-duplicated set
// of names N of every attribute access tools.N whose `tools` resolves to the
// predeclared tools object; a local, parameter or comprehension variable named
// tools does not count. Any other use of the predeclared tools (aliasing,
// passing it, getattr, indexing, dir) marks the analysis Opaque, with one
// Warning per use. Parameters are the other free names, minus the Starlark
// universe (len, range, dict...).
//
// # Rejections
//
// The code is tokenized with a Python-compatible tokenizer (strings,
// including triple-quoted and prefixed ones, comments and line continuations
// are understood), and common Python features that Starlark lacks are
// rejected by name with the position of their first token, in preference to
// any later error: import/from
// ("import"), class, try/except/finally ("try"), raise, with, yield,
// global/nonlocal ("global"), del, is, as, assert, f-strings ("f-string"),
// other string prefixes such as u"" ("string prefix"), the walrus operator
// ("walrus"), decorators ("decorator"), @ ("matmul"), -> ("annotation"),
// ... ("ellipsis"), the power operator ** ("power"), load statements ("load"),
// and in dialect starlark await and async ("await", "async": use dialect
// python-async). Code that is not valid UTF-8 or contains NUL bytes is
// rejected as "encoding", brackets nested deeper than MaxBracketDepth as "nesting",
// code larger than MaxCodeBytes as "code_size". Anything else the Starlark
// parser or resolver rejects is "syntax", with its position.
//
// Positions (Error and Warning Line and Column) are 1-based; columns count
// runes (like go.starlark.net/syntax) and always point into the code as
// written, also in dialect python-async.
//
// # The python-async dialect
//
// Dialect python-async accepts the asynchronous Python that agents generate
// (Bamboo's style). It is rewritten into Starlark on tokens, so text inside
// strings and comments is never touched:
//
//   - `await <expr>` becomes `<expr>`: the await token and the spaces or tabs
//     after it are dropped.
//   - `async def` becomes `def` (async for and async with are rejected as
//     "async").
//   - `asyncio.gather(a, b, ...)` becomes `[a, b, ...]`: the tokens
//     `asyncio . gather (` are replaced by `[` and the matching `)` by `]`, so
//     the calls run in order, left to right, and the result is a list.
//   - `asyncio.gather(*xs)` becomes `list(xs)`.
//   - A backslash that CPython keeps as it is in a non-raw string literal
//     (an invalid escape such as `"\d+"`) is doubled, so the string has the
//     value CPython gives it (backslash, d, +), and a Warning names its line
//     and column, as CPython warns. In dialect starlark it stays an error.
//   - Keyword arguments to gather (return_exceptions=True, **kw) are rejected as
//     "asyncio.gather keyword"; a starred argument mixed with others as
//     "asyncio.gather"; any other asyncio.X as "asyncio.X" (for example
//     "asyncio.sleep"); a bare asyncio as "asyncio".
//
// Lines are never joined or split by the rewrite (a line break between
// asyncio and its "(" is kept as a backslash continuation), and positions in
// errors and warnings are mapped back to the code as written. Analysis.Source
// holds the
// rewritten block, which is what the sandbox runs. The code hash is always
// computed on the code as captured, before the rewrite.
package signature
