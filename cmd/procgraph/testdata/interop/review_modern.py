"""MCP interop review at 2026-07-28: the official Python SDK as an operator's client.

Run by cmd/procgraph's TestMCPInteropReviewModern. Arguments: the
/mcp/interactive URL and a state-changing block; a grant-holding token in
MCP_TOKEN. The client negotiates 2026-07-28 (server/discover, no session),
so procgraph asks for the review as an input-required result
(inputRequests, requestState) and the SDK answers it through the
elicitation callback and retries the call. Steps, one JSON object each:
an approved review, a declined one, and a round trip driven by hand: a
forged requestState, the genuine one, the genuine one replayed.
"""

import json
import os
import sys

import anyio
import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

answers = []
asked = []


async def review(context, params):
    asked.append(params.message)
    return answers.pop(0)


def text(res):
    return "".join(getattr(c, "text", "") for c in getattr(res, "content", None) or [])


def show(step, res, **extra):
    print(json.dumps({"step": step, "is_error": bool(getattr(res, "is_error", False)), "text": text(res),
                      "asked": len(asked), **extra}), flush=True)


async def main(url, code):
    headers = {"Authorization": "Bearer " + os.environ["MCP_TOKEN"]}
    approve = types.ElicitResult(action="accept", content={"choice": "run_once", "reason": "interop review"})
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), elicitation_callback=review) as client:
            print(json.dumps({"step": "connect", "protocol": client.protocol_version}), flush=True)

            answers.append(approve)
            res = await client.call_tool("run_code", {"code": code, "arguments": {"panda_id": 5}, "session_id": "interop"})
            show("approve", res, names_tool=any("kill_job" in m for m in asked))

            answers.append(types.ElicitResult(action="decline"))
            res = await client.call_tool("run_code", {"code": code, "arguments": {"panda_id": 6}, "session_id": "interop"})
            show("deny", res)

            args = {"code": code, "arguments": {"panda_id": 7}, "session_id": "interop"}
            first = await client.session.call_tool("run_code", args, allow_input_required=True)
            state = first.request_state
            forged = state[:-2] + ("AA" if not state.endswith("AA") else "AB")
            res = await client.session.call_tool("run_code", args, input_responses={"review": approve},
                                                 request_state=forged, allow_input_required=True)
            show("forged", res, input_required=isinstance(first, types.InputRequiredResult),
                 requests=sorted((first.input_requests or {}).keys()))
            res = await client.session.call_tool("run_code", args, input_responses={"review": approve},
                                                 request_state=state, allow_input_required=True)
            show("genuine", res)
            res = await client.session.call_tool("run_code", args, input_responses={"review": approve},
                                                 request_state=state, allow_input_required=True)
            show("replayed", res)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
