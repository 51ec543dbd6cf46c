"""MCP interop client: the official Python SDK (PyPI `mcp`) against procgraph.

Run by cmd/procgraph's TestMCPInteropPython. Arguments: the MCP endpoint URL,
a read-only proc__ tool, a state-changing one. Prints one JSON object per
line on stdout (the steps); the SDK's warnings go to stderr, which the test
requires to be empty. After the step "ready" it waits for a line on stdin
(the test has captured a new procedure), then for
notifications/tools/list_changed.
"""

import json
import logging
import sys
import warnings

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
logging.captureWarnings(True)
warnings.simplefilter("default")


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main(url, read_only, state_changing):
    changed = anyio.Event()

    async def on_message(message):
        if getattr(message, "method", "") == "notifications/tools/list_changed":
            changed.set()

    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            await session.send_ping()
            emit("ping")
            tools = (await session.list_tools()).tools
            emit("list", tools=sorted(t.name for t in tools),
                 read_only={t.name: bool(t.annotations and t.annotations.read_only_hint) for t in tools})
            res = await session.call_tool(read_only, {"task_id": 7})
            emit("call", is_error=bool(res.is_error), text=text_of(res))
            res = await session.call_tool(state_changing, {"task_id": 7})
            emit("deny", is_error=bool(res.is_error), text=text_of(res))
            emit("ready")
            await anyio.to_thread.run_sync(sys.stdin.readline)
            with anyio.fail_after(20):
                await changed.wait()
            tools = (await session.list_tools()).tools
            emit("changed", tools=sorted(t.name for t in tools))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
