"""The official Python MCP SDK as the client of BenchmarkInvokeCost.

Run by bench/invoke_test.go with one argument, a JSON object:
  direct:   {R: {"command", "args", "env"}} the filesystem server over stdio
            (behind the benchmark's stdio proxy, its answers delayed R ms)
  mcp:      {R: URL} procgraph's /mcp (behind a TCP proxy delaying R ms)
  read:     the arguments of one read_text_file call
  three:    the three tools the direct client calls with them
  proc:     a proc__ tool of three reads and its arguments
  run_code: a block of one read and its arguments
  bare:     a bare HTTP server's URL (the floor of a request)
Then it reads commands from stdin, one a line: "OP R" with OP one of
direct_read, direct_three, proc, run_code, discover (server/discover,
2026-07-28's one-round-trip probe), legacy_ping (a ping on a 2025-11-25
session: ping is gone at 2026-07-28) and bare (discover's request posted
by the SDK's HTTP client to the bare server). It runs the operation
once and prints {"ns": wall nanoseconds} (or {"error": text}): the wall
time of the SDK call alone, measured here.
"""

import json
import sys
import time
from contextlib import AsyncExitStack

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def text_of(res):
    return "".join(getattr(c, "text", "") for c in getattr(res, "content", None) or [])


async def main(raw):
    cfg = json.loads(raw)
    async with AsyncExitStack() as stack:
        direct, mcp = {}, {}
        for r, p in cfg["direct"].items():
            params = StdioServerParameters(command=p["command"], args=p["args"], env=p.get("env"))
            direct[r] = await stack.enter_async_context(Client(params))
        for r, url in cfg["mcp"].items():
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=60))
            mcp[r] = await stack.enter_async_context(Client(streamable_http_client(url, http_client=http)))
        # ping is gone at 2026-07-28: the SDK pings only on a legacy
        # (2025-11-25, stateful) session; its modern one-round-trip probe is
        # server/discover.
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=60))
        legacy = await stack.enter_async_context(Client(streamable_http_client(cfg["mcp"]["0"], http_client=http), mode="legacy"))
        print(json.dumps({"ready": True, "legacy": legacy.protocol_version, "protocols": {r: c.protocol_version for r, c in mcp.items()}}), flush=True)

        read_args = cfg["read"]
        proc_name, proc_args = cfg["proc"]["name"], cfg["proc"]["arguments"]
        code_args = {"code": cfg["run_code"]["code"], "arguments": cfg["run_code"]["arguments"],
                     "session_id": "bench"}

        async def direct_read(c):
            return [await c.call_tool("read_text_file", read_args)]

        async def direct_three(c):
            return [await c.call_tool(tool, read_args) for tool in cfg["three"]]

        async def proc(c):
            return [await c.call_tool(proc_name, proc_args)]

        async def run_code(c):
            return [await c.call_tool("run_code", code_args)]

        async def discover(c):
            await c.session.send_discover(c.protocol_version)
            return []

        # The floor of the SDK's requests: its HTTP client (httpx2) posting
        # server/discover's request to a server that answers at once.
        bare_http = await stack.enter_async_context(httpx2.AsyncClient(timeout=60))
        bare_body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})
        bare_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                        "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}

        async def bare(_):
            resp = await bare_http.post(cfg["bare"], content=bare_body, headers=bare_headers)
            resp.json()
            return []

        async def legacy_ping(_):
            await legacy.session.send_ping()
            return []

        ops = {"direct_read": (direct_read, direct), "direct_three": (direct_three, direct),
               "proc": (proc, mcp), "run_code": (run_code, mcp), "discover": (discover, mcp),
               "legacy_ping": (legacy_ping, mcp), "bare": (bare, mcp)}
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                return
            op, r = line.split()
            fn, clients = ops[op]
            start = time.perf_counter_ns()
            results = await fn(clients[r])
            ns = time.perf_counter_ns() - start
            bad = [text_of(x)[:300] for x in results if getattr(x, "is_error", False)]
            if bad:
                print(json.dumps({"error": bad[0]}), flush=True)
            else:
                print(json.dumps({"ns": ns}), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
