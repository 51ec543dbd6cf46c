// BenchmarkInvokeCost's timing of an MCP server over stdio, loaded into the
// server's own node process (node -r invoke_timing.cjs server.js): for each
// request the server reads it appends to the file PROCGRAPH_BENCH_NODE_LOG
// the nanoseconds from the request's line read to its answer written (the
// log line is written first, so a client that has the answer finds its
// time logged). No process sits between the client and the server.
'use strict';
const fs = require('fs');

const logPath = process.env.PROCGRAPH_BENCH_NODE_LOG;
if (logPath) {
  const fd = fs.openSync(logPath, 'a');
  const started = new Map();
  let pending = '';
  // Wrapping emit sees each chunk as the server's own listener does,
  // without reading stdin before the server listens.
  const stdin = process.stdin;
  const emit = stdin.emit;
  stdin.emit = function (event, ...args) {
    if (event === 'data') seen(args[0]);
    return emit.call(this, event, ...args);
  };
  function seen(chunk) {
    const now = process.hrtime.bigint();
    pending += chunk.toString('utf8');
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        const m = JSON.parse(line);
        if (m && m.method && m.id !== undefined) started.set(JSON.stringify(m.id), now);
      } catch (_) { /* not ours to judge */ }
    }
  }
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (data, ...rest) => {
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const m = JSON.parse(line);
        const key = m && !m.method && m.id !== undefined ? JSON.stringify(m.id) : null;
        if (key !== null && started.has(key)) {
          fs.writeSync(fd, `${process.hrtime.bigint() - started.get(key)}\n`);
          started.delete(key);
        }
      } catch (_) { /* a partial line: not an answer */ }
    }
    return write(data, ...rest);
  };
}
