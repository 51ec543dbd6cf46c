"""MCP interop: an answer at the call given after the turn moved on.

Run by cmd/procgraph's TestMCPInteropReviewAtCallStale. Arguments: the
/mcp/interactive URL and a block; the token is MCP_TOKEN. With the
official Python SDK at 2026-07-28 it calls run_code with review "at_call"
and takes the input-required result by hand: it prints the review's
message, waits for a line on stdin (meanwhile the test answers that call
elsewhere and the run pauses at the next one), then answers the review it
was shown — approve run_once — with its requestState, and prints what
the server answered.
"""

import json
import os
import sys

import anyio
import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client


async def unused(context, params):
    raise RuntimeError("the review is answered by hand here")


def text(res):
    return "".join(getattr(c, "text", "") for c in getattr(res, "content", None) or [])


async def main(url, code):
    headers = {"Authorization": "Bearer " + os.environ["MCP_TOKEN"]}
    args = {"code": code, "session_id": "interop-stale", "review": "at_call"}
    approve = types.ElicitResult(action="accept", content={"choice": "run_once", "reason": "interop stale answer"})
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), elicitation_callback=unused) as client:
            first = await client.session.call_tool("run_code", args, allow_input_required=True)
            message = first.input_requests["review"].params.message
            print(json.dumps({"step": "asked", "message": message}), flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            res = await client.session.call_tool("run_code", args, input_responses={"review": approve},
                                                 request_state=first.request_state, allow_input_required=True)
            print(json.dumps({"step": "answered", "is_error": bool(getattr(res, "is_error", False)), "text": text(res),
                              "input_required": isinstance(res, types.InputRequiredResult)}), flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
