// The official TypeScript SDK as its README shows it: Client + StdioClientTransport.
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const { args, measure, report, now } = createRequire(import.meta.url)('./bench_common.js');

const { server, k, conc } = args();
const started = now();
const client = new Client({ name: 'mcpmux-bench', version: '0.1.0' });
await client.connect(new StdioClientTransport({ command: server, args: [] }));
const connectNs = now() - started;
const figures = await measure(k, conc, async () => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  if (r.isError) throw new Error('tool failed');
});
await client.close();
report('ts-sdk', k, conc, connectNs, figures);
