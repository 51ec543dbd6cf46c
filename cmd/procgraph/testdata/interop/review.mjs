// MCP interop review: the official TypeScript SDK as an operator's client.
// Run by cmd/procgraph's TestMCPInteropReview with the protocol of
// review.py: arguments the /mcp/interactive URL and a block; MCP_TOKEN a
// grant-holding token; one JSON object on stdout.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, code] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN}` } },
});
transport.onerror = (err) => console.error(`WARNING transport: ${err}`);
const client = new Client({ name: 'procgraph-interop-review', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.onerror = (err) => console.error(`WARNING client: ${err}`);
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  return { action: 'accept', content: { choice: 'run_once', reason: 'interop review' } };
});
await client.connect(transport);
const res = await client.callTool({ name: 'run_code', arguments: { code, arguments: { panda_id: 5 }, session_id: 'interop' } });
process.stdout.write(JSON.stringify({
  step: 'review', protocol: transport.protocolVersion, asked: asked.length,
  names_tool: asked.some((m) => m.includes('kill_job')), is_error: Boolean(res.isError),
  text: res.content.map((c) => c.text ?? '').join(''),
}) + '\n');
await transport.terminateSession();
await client.close();
process.exit(0);
