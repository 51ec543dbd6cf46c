"""MCP interop: the in-client review of a block that calls procedures.

Run by cmd/procgraph's TestReviewInMCPClient. Arguments: the
/mcp/interactive URL, the block, its arguments (JSON) and the revision to
negotiate: "legacy" (initialize at 2025-11-25: the review is an
elicitation on the session) or "modern" (2026-07-28: an input-required
result the SDK answers through the same callback). A grant-holding token
is in MCP_TOKEN. The operator's callback keeps the review's message and
rejects the block; the script prints one JSON object: the revision, the
messages it was asked with and the answer.
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
    return types.ElicitResult(action="accept", content={"choice": "reject", "reason": "it kills a job"})


def text(res):
    return "".join(getattr(c, "text", "") for c in getattr(res, "content", None) or [])


async def main(url, code, arguments, revision):
    headers = {"Authorization": "Bearer " + os.environ["MCP_TOKEN"]}
    call = {"code": code, "arguments": json.loads(arguments), "session_id": "interop-nested"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        if revision == "legacy":
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write, elicitation_callback=review) as session:
                    init = await session.initialize()
                    protocol = init.protocol_version
                    res = await session.call_tool("run_code", call)
        else:
            async with Client(streamable_http_client(url, http_client=http), elicitation_callback=review) as client:
                protocol = client.protocol_version
                res = await client.call_tool("run_code", call)
    print(json.dumps({"protocol": protocol, "messages": asked, "is_error": bool(getattr(res, "is_error", False)),
                      "text": text(res)}), flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:5])
