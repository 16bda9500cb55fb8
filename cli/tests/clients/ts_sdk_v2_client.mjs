// A user of `mcpmux serve` on the TypeScript SDK v2's client (`@modelcontextprotocol/client`)
// with `versionNegotiation: { mode: 'auto' }`, which finds the server's protocol with
// `server/discover` and speaks 2026-07-28 to it: lists the tools, calls tools of a 2026-07-28
// upstream and of a legacy one, follows a call's progress, reads a resource, gets a prompt
// and completes an argument. The SDK checks every answer; this script also checks each one
// on the wire against the specification's JSON Schema of 2026-07-28 (SCHEMA, with Ajv).
//
//   node ts_sdk_v2_client.mjs NODE_MODULES SCHEMA stdio MCPMUX_BINARY CONFIG
//   node ts_sdk_v2_client.mjs NODE_MODULES SCHEMA http URL TOKEN
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, schemaPath, mode, a, b] = process.argv.slice(2);
const from = createRequire(path.join(modules, 'package.json'));
const load = (name) => import(pathToFileURL(from.resolve(name)).href);
const { Client, StreamableHTTPClientTransport } = await load('@modelcontextprotocol/client');
const { StdioClientTransport } = await load('@modelcontextprotocol/client/stdio');
const { default: Ajv2020 } = await load('ajv/dist/2020.js');

function check(condition, what, seen) {
  if (!condition) {
    console.error(`FAILED: ${what}; saw ${JSON.stringify(seen)}`);
    process.exit(1);
  }
}

const RESULTS = {
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'resources/list': 'ListResourcesResult',
  'resources/read': 'ReadResourceResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'completion/complete': 'CompleteResult',
};
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(JSON.parse(readFileSync(schemaPath, 'utf8')), 'mcp');
const violations = (definition, value) => {
  const validate = ajv.getSchema(`mcp#/$defs/${definition}`);
  return validate(value) ? [] : validate.errors.map((e) => `${definition}${e.instancePath}: ${e.message}`);
};

/** Records what goes out (request id -> method) and every message that comes in. */
function tap(transport) {
  const wire = { methods: new Map(), incoming: [] };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method && message.id !== undefined) wire.methods.set(message.id, message.method);
    return send(message, options);
  };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler && ((message, extra) => {
      wire.incoming.push(structuredClone(message));
      return handler(message, extra);
    }),
    set: (fn) => {
      handler = fn;
    },
  });
  return wire;
}

// The probe runs on the session's own pipe (a subclass, as the SDK documents), so that what
// is checked is what this session heard.
class OnePipe extends StdioClientTransport {}

function transport() {
  if (mode === 'stdio') {
    return new OnePipe({ command: a, args: ['--config', b, 'serve', '--stdio', '--mode', 'direct'] });
  }
  return new StreamableHTTPClientTransport(new URL(a), {
    requestInit: { headers: { Authorization: `Bearer ${b}` } },
  });
}

const text = (result) => result.content.map((c) => c.text ?? '').join('');

const client = new Client({ name: 'ts-sdk-v2-user', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
const via = transport();
const wire = tap(via);
await client.connect(via);
check(client.getNegotiatedProtocolVersion() === '2026-07-28', '2026-07-28 is spoken', client.getNegotiatedProtocolVersion());

const names = (await client.listTools()).tools.map((t) => t.name);
for (const expected of ['demo__echo', 'demo__countdown', 'everything__get-sum', 'py__say']) {
  check(names.includes(expected), `tool ${expected} listed`, names);
}
const echoed = await client.callTool({ name: 'demo__echo', arguments: { text: 'via ts v2' } });
check(text(echoed) === 'via ts v2', 'demo__echo answers', echoed);
const summed = await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
check(text(summed).includes('5'), "a legacy upstream's tool answers", summed);
const said = await client.callTool({ name: 'py__say', arguments: { message: 'hi' } });
check(!said.isError, "a Python SDK upstream's tool answers", said);

const progress = [];
const done = await client.callTool(
  { name: 'demo__countdown', arguments: { steps: 3 } },
  { onprogress: (p) => progress.push(p.progress), resetTimeoutOnProgress: true },
);
check(text(done) === 'liftoff', 'demo__countdown answers', done);
// As v1 (tests/clients/ts_sdk_client.js), the SDK dispatches notifications a microtask late
// and responses at once, forgetting the call's progress handler: when the last update and the
// result arrive in one read, that update is dropped on the client's side, whatever the server
// does (https://github.com/modelcontextprotocol/typescript-sdk/issues/2580). The updates
// before it must all arrive, in order.
check(['[1,2]', '[1,2,3]'].includes(JSON.stringify(progress)), 'progress arrives in order', progress);

const read = await client.readResource({ uri: 'mcpmux:demo/demo://readme' });
check(read.contents[0].text.includes('demo server'), 'the resource reads', read);
const got = await client.getPrompt({ name: 'demo__greet', arguments: { name: 'Ada' } });
check(got.messages[0].content.text.includes('Ada'), 'the prompt is filled', got);
const completion = await client.complete({
  ref: { type: 'ref/prompt', name: 'demo__greet' },
  argument: { name: 'name', value: 'Gr' },
});
check(JSON.stringify(completion.completion.values) === '["Grace"]', 'the argument completes', completion);
await client.close();

const problems = [];
let checked = 0;
for (const message of wire.incoming) {
  if ('result' in message && 'id' in message) {
    const method = wire.methods.get(message.id) ?? '?';
    if (message.result.resultType !== 'complete') problems.push(`${method}: resultType ${message.result.resultType}`);
    if (RESULTS[method]) {
      problems.push(...violations(RESULTS[method], message.result).map((v) => `${method}: ${v}`));
      checked += 1;
    }
  } else if (message.method === 'notifications/progress') {
    problems.push(...violations('ProgressNotification', message));
  } else if ('error' in message) {
    problems.push(...violations('JSONRPCErrorResponse', message));
  }
}
check(problems.length === 0, 'every answer is what the 2026-07-28 schema says', problems);
check(checked >= 9, 'the answers were seen on the wire', checked);
console.log('ts sdk v2 client: ok');
