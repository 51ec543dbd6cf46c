package main

import (
	"context"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/procgraph/procgraph/graph/embedded"
)

// cmdCompact rewrites a stopped server's embedded store file without its
// free pages (embedded.Compact): a large transaction (a prune, a long
// life of large batches) leaves thousands, whose list every later commit
// copies and writes. An import into the embedded store compacts it at
// its end (cmdImport); a file holding an unfinished import is refused
// (unfinishedImport).
func cmdCompact(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("compact", "compact [--data FILE]",
		"Rewrite the embedded store file without the free pages a large import or prune left (every commit copies their list); the server must be stopped. The file is replaced whole or not at all.", false)
	data := cl.fs.String("data", "./procgraph.db", "the embedded store file to compact")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	m, err := embedded.LoadStateOf(*data, time.Second)
	if err != nil {
		return fail(s.err, "compact", fmt.Errorf("%v (stop the server first if it holds the file)", err))
	}
	if err := unfinishedImport(m, &serveConfig{Store: "embedded", Data: *data}, "procgraph compact does not rewrite it"); err != nil {
		return fail(s.err, "compact", err)
	}
	res, err := embedded.Compact(ctx, *data, time.Second)
	if err != nil {
		return fail(s.err, "compact", fmt.Errorf("%v (stop the server first if it holds the file)", err))
	}
	printCompacted(s, *data, res)
	return 0
}

// printCompacted says what compacting path did.
func printCompacted(s stdio, path string, res embedded.Compacted) {
	fmt.Fprintf(s.out, "compacted %s: %s -> %s (%d free pages dropped)\n", path,
		humanize.IBytes(uint64(res.BytesBefore)), humanize.IBytes(uint64(res.BytesAfter)), res.FreePagesBefore)
}
