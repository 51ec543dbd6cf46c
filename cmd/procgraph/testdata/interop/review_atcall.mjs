// MCP interop review at the call: the official TypeScript SDK as the
// client, on a session at 2025-11-25 (the SDK knows no later revision):
// the review by elicitation, as review_atcall.py's "legacy". Arguments:
// the /mcp/interactive URL and a block; MCP_TOKEN the token; one JSON
// object on stdout.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, code] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN}` } },
});
transport.onerror = (err) => console.error(`WARNING transport: ${err}`);
const client = new Client({ name: 'procgraph-interop-atcall', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.onerror = (err) => console.error(`WARNING client: ${err}`);
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  return { action: 'accept', content: { choice: 'run_once', reason: 'interop review at the call' } };
});
await client.connect(transport);
const res = await client.callTool({ name: 'run_code', arguments: { code, session_id: 'interop-atcall', review: 'at_call' } },
  undefined, { timeout: 60000 });
process.stdout.write(JSON.stringify({
  protocol: transport.protocolVersion, asked, is_error: Boolean(res.isError),
  text: res.content.map((c) => c.text ?? '').join(''),
}) + '\n');
await transport.terminateSession();
await client.close();
process.exit(0);
