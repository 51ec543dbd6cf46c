"""MCP interop listing: what the official Python SDK is offered with a token.

Run by cmd/procgraph's TestMCPInteropListsWhatTheCallerMayCall. Argument:
an MCP endpoint URL; the token in MCP_TOKEN. It lists the tools twice, on
a session (initialize at 2025-11-25) and at 2026-07-28 (server/discover,
no session), and prints one JSON object per listing: the negotiated
revision, the tool names and the list's cache scope.
"""

import json
import os
import sys

import anyio
import httpx2
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client


def emit(step, protocol, result):
    print(json.dumps({"step": step, "protocol": protocol, "tools": sorted(t.name for t in result.tools),
                      "cache_scope": getattr(result, "cache_scope", None)}), flush=True)


async def main(url):
    headers = {"Authorization": "Bearer " + os.environ["MCP_TOKEN"]}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                emit("session", init.protocol_version, await session.list_tools())
        async with Client(streamable_http_client(url, http_client=http)) as client:
            emit("modern", client.protocol_version, await client.list_tools())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
