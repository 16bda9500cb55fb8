'use strict';
// A user of `mcpmux serve` on the TypeScript SDK's client: lists and calls tools of the
// upstream servers, follows a call's progress, reads a resource and gets a prompt; every
// check fails the script with what it saw.
//
//   node ts_sdk_client.js NODE_MODULES stdio MCPMUX_BINARY CONFIG
//   node ts_sdk_client.js NODE_MODULES http URL TOKEN
//
// or, against `mcpmux serve --mode search` in front of hundreds of tools, finds a tool with
// search_tools and calls it through call_tool, never seeing the whole list:
//
//   node ts_sdk_client.js NODE_MODULES search URL TOKEN
const { createRequire } = require('node:module');
const path = require('node:path');

const [modules, mode, a, b] = process.argv.slice(2);
const sdk = createRequire(path.join(modules, 'package.json'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');

function check(condition, what, seen) {
  if (!condition) {
    console.error(`FAILED: ${what}; saw ${JSON.stringify(seen)}`);
    process.exit(1);
  }
}

function transport() {
  if (mode === 'stdio') {
    const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js');
    return new StdioClientTransport({
      command: a,
      args: ['--config', b, 'serve', '--stdio', '--mode', 'direct'],
    });
  }
  const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
  return new StreamableHTTPClientTransport(new URL(a), {
    requestInit: { headers: { Authorization: `Bearer ${b}` } },
  });
}

const text = (result) => result.content.map((c) => c.text ?? '').join('');

async function main() {
  const client = new Client({ name: 'ts-sdk-user', version: '1.0.0' });
  await client.connect(transport());
  check(client.getServerVersion()?.name === 'mcpmux', 'serverInfo.name is mcpmux', client.getServerVersion());

  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const expected of ['demo__echo', 'demo__countdown', 'everything__echo', 'py__say']) {
    check(names.includes(expected), `tool ${expected} listed`, names);
  }
  check(!names.some((n) => n.startsWith('broken__')), 'the broken server drops out', names);

  const echoed = await client.callTool({ name: 'everything__echo', arguments: { message: 'via ts' } });
  check(text(echoed).includes('via ts'), 'everything__echo answers', echoed);

  const progress = [];
  const done = await client.callTool(
    { name: 'demo__countdown', arguments: { steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  check(text(done) === 'liftoff', 'demo__countdown answers', done);
  // The SDK runs notification handlers a microtask late, and forgets a call's progress
  // handler as soon as its result is read: when the last update and the result arrive in one
  // read, that update is dropped on the client's side, whatever the server does
  // (https://github.com/modelcontextprotocol/typescript-sdk/issues/2580). The updates before
  // it, 100 ms apart, must all arrive, in order.
  check(['[1,2]', '[1,2,3]'].includes(JSON.stringify(progress)), 'progress arrives in order', progress);

  const failed = await client.callTool({ name: 'nope__nothing', arguments: {} }).catch((e) => e);
  check(failed instanceof Error && /tools\/list/.test(failed.message), 'an unknown tool names tools/list', String(failed));
  // A name in another form (the pool's id of the tool) is offered under its served name.
  const misnamed = await client.callTool({ name: 'mcp__demo__countdown', arguments: {} }).catch((e) => e);
  check(
    misnamed instanceof Error && /did you mean demo__countdown\?/.test(misnamed.message),
    "a misnamed tool's error offers its served name",
    String(misnamed),
  );

  const read = await client.readResource({ uri: 'mcpmux:demo/demo://readme' });
  check(read.contents[0].text.includes('demo server'), 'the resource reads', read);
  const prompt = await client.getPrompt({ name: 'demo__greet', arguments: { name: 'Grace' } });
  check(prompt.messages[0].content.text.includes('Grace'), 'the prompt is filled', prompt);

  await client.close();
  console.log('ts sdk client: ok');
}

async function search() {
  const client = new Client({ name: 'ts-sdk-user', version: '1.0.0' });
  await client.connect(transport());
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === '["call_tool","describe_tools","search_tools"]', 'only the search tools are listed', names);

  const found = await client.callTool({ name: 'search_tools', arguments: { query: 'count down reporting progress' } });
  const best = found.structuredContent?.tools?.[0];
  check(best?.name === 'demo__countdown', 'search_tools finds demo__countdown first', found.structuredContent);
  check(best.inputSchema?.properties?.steps?.type === 'integer', 'the best hit comes with its input schema', best);

  const done = await client.callTool({ name: 'call_tool', arguments: { name: best.name, arguments: { steps: 2 } } });
  check(text(done) === 'liftoff', 'call_tool calls the tool found', done);

  await client.close();
  console.log('ts sdk client: ok');
}

(mode === 'search' ? search() : main()).catch((e) => {
  console.error(e);
  process.exit(1);
});
