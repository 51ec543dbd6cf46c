// MCP interop client: the official TypeScript SDK (npm @modelcontextprotocol/sdk)
// against procgraph. Run by cmd/procgraph's TestMCPInteropTypeScript with the
// same protocol as client.py: arguments URL, a read-only proc__ tool, a
// state-changing one; one JSON object per line on stdout; transport and
// client errors and warnings on stderr, which the test requires to be empty.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, readOnly, stateChanging] = process.argv.slice(2);
const emit = (step, fields = {}) => process.stdout.write(JSON.stringify({ step, ...fields }) + '\n');
const textOf = (res) => res.content.map((c) => c.text ?? '').join('');

const transport = new StreamableHTTPClientTransport(new URL(url));
transport.onerror = (err) => console.error(`WARNING transport: ${err}`);
const client = new Client({ name: 'procgraph-interop', version: '1.0.0' });
client.onerror = (err) => console.error(`WARNING client: ${err}`);
let changed;
const listChanged = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());

await client.connect(transport);
await client.ping();
emit('ping', { protocol: transport.protocolVersion ?? '' });
let { tools } = await client.listTools();
emit('list', {
  tools: tools.map((t) => t.name).sort(),
  read_only: Object.fromEntries(tools.map((t) => [t.name, Boolean(t.annotations?.readOnlyHint)])),
});
let res = await client.callTool({ name: readOnly, arguments: { task_id: 7 } });
emit('call', { is_error: Boolean(res.isError), text: textOf(res) });
res = await client.callTool({ name: stateChanging, arguments: { task_id: 7 } });
emit('deny', { is_error: Boolean(res.isError), text: textOf(res) });
emit('ready');
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once('line', resolve));
lines.close();
const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no notifications/tools/list_changed within 20s')), 20000));
await Promise.race([listChanged, timeout]);
({ tools } = await client.listTools());
emit('changed', { tools: tools.map((t) => t.name).sort() });
await transport.terminateSession();
await client.close();
process.exit(0);
