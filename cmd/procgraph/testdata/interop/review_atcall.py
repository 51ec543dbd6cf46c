"""MCP interop review at the call: the official Python SDK as the client.

Run by cmd/procgraph's TestMCPInteropReviewAtCall. Arguments: the
/mcp/interactive URL, a block, and the revision: "legacy" (a session
opened with initialize at 2025-11-25: the review by elicitation) or
"modern" (2026-07-28: an input-required result the SDK answers through
the same callback and retries). The token is MCP_TOKEN. run_code is
called with review "at_call"; each time the client is asked it approves
run_once. It prints one JSON object: the revision, every message it was
asked, and the answer.
"""

import json
import os
import sys

import anyio
import httpx2
from mcp import Client, ClientSession, types
from mcp.client.streamable_http import streamable_http_client

asked = []


async def review(context, params):
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"choice": "run_once", "reason": "interop review at the call"})


def text(res):
    return "".join(getattr(c, "text", "") for c in getattr(res, "content", None) or [])


async def main(url, code, revision):
    headers = {"Authorization": "Bearer " + os.environ["MCP_TOKEN"]}
    args = {"code": code, "session_id": "interop-atcall", "review": "at_call"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        if revision == "modern":
            async with Client(streamable_http_client(url, http_client=http), elicitation_callback=review) as client:
                res = await client.call_tool("run_code", args)
                protocol = client.protocol_version
        else:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write, elicitation_callback=review) as session:
                    init = await session.initialize()
                    res = await session.call_tool("run_code", args)
                    protocol = init.protocol_version
    print(json.dumps({"protocol": protocol, "asked": asked, "is_error": bool(res.is_error), "text": text(res)}), flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
