"""MCP interop review: the official Python SDK as an operator's client.

Run by cmd/procgraph's TestMCPInteropReview. Arguments: the
/mcp/interactive URL and a grant-holding token (MCP_TOKEN in the
environment). It connects with an elicitation callback that approves
run_once, calls run_code with a state-changing block, and prints one JSON
object: the negotiated revision, how often it was asked, and the answer.
"""

import json
import os
import sys

import anyio
import httpx2
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

asked = []


async def review(context, params):
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"choice": "run_once", "reason": "interop review"})


async def main(url, code):
    headers = {"Authorization": "Bearer " + os.environ["MCP_TOKEN"]}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, elicitation_callback=review) as session:
                init = await session.initialize()
                res = await session.call_tool("run_code", {"code": code, "arguments": {"panda_id": 5}, "session_id": "interop"})
                print(json.dumps({"step": "review", "protocol": init.protocol_version, "asked": len(asked),
                                  "names_tool": any("kill_job" in m for m in asked), "is_error": bool(res.is_error),
                                  "text": "".join(getattr(c, "text", "") for c in res.content)}), flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
