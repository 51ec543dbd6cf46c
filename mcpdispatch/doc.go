// Package mcpdispatch sends procgraph's replayed tool calls to an upstream
// MCP server, and builds a tool catalogue from what that server lists.
//
// A Dispatcher (a replay.Dispatcher) keeps one MCP client session to the
// upstream and reuses it across replays. The upstream is reached over
// streamable HTTP (NewHTTP) or over stdio (NewCommand: procgraph starts the
// command and supervises it). A session that breaks — the process exits, the
// HTTP server restarts and forgets the session — is dropped and
// re-established on the next call; failed connection attempts back off
// exponentially (Options.MinBackoff to Options.MaxBackoff), and calls made
// while backing off fail at once rather than queue. A call is never retried
// once it may have reached the upstream; the one exception is a call the
// upstream answered with "session not found" (HTTP 404), which it did not
// run, and which is sent again once on a fresh session.
//
// Every call is bounded by Options.CallTimeout, raised to
// Options.ReplayTimeout when that is larger (serve: --replay-timeout), and
// by its caller's context. Concurrent calls share the session and are
// answered each on its own: a slow call delays no other (up to
// Options.MaxConcurrency in flight). A call its caller abandons is
// cancelled upstream: the SDK sends notifications/cancelled. After three
// calls in a row time out on a session it is taken for hung and replaced
// (a command restarted), but closed only once its calls in flight end, so
// the rule fails no other call.
//
// Every failed call is an error that is a *sandbox.Error to errors.As,
// whose code is the run's failure class (replay.FailureClass):
// upstream_unavailable when the server could not be reached (down,
// backing off, closed) or was lost before it answered; timeout when the
// call's own bound ended it; invalid_arguments when the server answered
// JSON-RPC -32602; tool_failed for a tool result with isError (its text,
// bounded to 512 bytes, is the message) and any other refusal. The
// Gateway keeps the code and names the server in the message.
//
// A session is established offering Options.ProtocolVersion (the newest
// revision the SDK speaks by default); a server that refuses it in the
// handshake is offered each older revision of mcp.SupportedProtocolVersions
// in turn. The revision negotiated is logged and told by
// Dispatcher.Protocol.
//
// A successful result is the
// structuredContent when present; otherwise a single text content that
// parses as JSON is that JSON value, any other single text is the string,
// and several contents are a list. Numbers keep integer precision
// (json.Number), as with replay.HTTPDispatcher.
//
// Several servers: an upstreams file (ParseUpstreams: the mcpServers
// object of Claude Desktop, Cursor and Claude Code, strict, with
// procgraph's keys) names servers by key. OpenUpstreams opens a Dispatcher
// per server, each connected and reconnected on its own (Supervise); a
// Gateway routes each catalogue tool's call to the server its entry names
// (procedures.Tool.Server) under the entry's name on that server
// (upstream_name), refusing a tool whose server is not configured. The one
// unnamed server of the --upstream-* flags is the Gateway's server "".
//
// Import lists the upstream's tools (tools/list) as procgraph catalogue
// entries, named by ToolName: PREFIX__T (the server's prefix, its key by
// default; none for the unnamed server), every character outside
// [A-Za-z0-9_] mapped to '_', a long name shortened with a hash — so
// kebab-case and dotted names are callable as tools.NAME. Two tools that
// map to one name are an error naming both (CatalogueOf). MCP tool
// annotations are hints from the server, so they are trusted only when
// asked: with trustAnnotations, read_only is the tool's readOnlyHint and
// external_access its openWorldHint (true when absent, the MCP default);
// without it every tool is read_only false (state-changing: procedures
// using it are never run in the automatic phase) and external_access true.
// A tool whose mapped name would start with proc__ is skipped and reported.
//
// A Refresher keeps the catalogue following the servers of an upstreams
// file: each server is listed on its own — at start, when it announces
// notifications/tools/list_changed or a session is established again
// (Options.OnToolsChanged; over HTTP the standalone SSE stream is opened
// for it), and every RefreshOptions.Interval — and what it lists is merged
// by procedures.Service.RefreshCatalogue, which writes only a change. A
// server that cannot be listed changes nothing; a listing takes no call
// slot, and one server's never waits for another's.
//
// Close closes a command server's input; one that has not exited 2 s
// later is stopped by a signal (the MCP spec's shutdown), logged, not an
// error.
//
// A command server's standard error goes to the log (or, for an import,
// the warnings) line by line, bounded to 2 KiB and escaped
// (text.VisibleLine), with the server's key; the log takes at most 100
// lines a minute and counts the rest.
package mcpdispatch
