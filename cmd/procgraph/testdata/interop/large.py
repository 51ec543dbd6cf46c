"""MCP interop: a large result read by the official Python SDK.

Run by cmd/procgraph's TestMCPInteropLargeResult. Arguments: the MCP
endpoint URL and a proc__ tool whose result is large. Prints one JSON
object: whether the call was a tool error, the size of the structured
content the SDK read, and the length and start of the text content. The
SDK refuses a server-sent event over 1 MiB: a result sent twice in full
(text and structured content) past half of that failed the call.
"""

import json
import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url, tool):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            res = await session.call_tool(tool, {"task_id": 7})
            text = "".join(getattr(c, "text", "") for c in res.content)
            structured = res.structured_content
            print(json.dumps({"is_error": bool(res.is_error),
                              "structured_bytes": len(json.dumps(structured)) if structured is not None else 0,
                              "text_len": len(text), "text": text[:300]}), flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
