'use strict';
// server-everything (the reference TypeScript server) over stdio and Streamable HTTP.
const test = require('node:test');
const assert = require('node:assert/strict');

const { Pool } = require('mcpmux');
const { testOptions, everythingStdioInput, startEverythingHttp, waitEvent, text, tasksServer } = require('./helpers');

async function exercise(pool) {
  const tools = await pool.listTools('everything');
  const names = tools.map((t) => t.name);
  for (const expected of ['echo', 'get-sum', 'trigger-long-running-operation']) {
    assert.ok(names.includes(expected), `${expected} missing from ${names}`);
  }
  assert.match(text(await pool.callTool('mcp__everything__echo', { message: 'hello' })), /hello/);
  assert.match(text(await pool.callTool('mcp__everything__get-sum', { a: 2, b: 3 })), /5/);

  const progress = [];
  const r = await pool.callTool(
    'mcp__everything__trigger-long-running-operation',
    { duration: 1, steps: 3 },
    { onProgress: (p) => progress.push(p) },
  );
  assert.notEqual(r.isError, true);
  assert.ok(progress.length >= 2, JSON.stringify(progress));

  // Cancelling a call of a third-party server.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  await assert.rejects(
    pool.callTool('mcp__everything__trigger-long-running-operation', { duration: 10, steps: 10 }, {
      signal: controller.signal,
    }),
    { code: 'cancelled' },
  );

  const resources = await pool.listResources('everything');
  assert.ok(resources.length > 0);
  const read = await pool.readResource('everything', resources[0].uri);
  assert.ok(read.contents.length > 0);
  assert.ok((await pool.listResourceTemplates('everything')).length > 0);
  const prompts = await pool.listPrompts('everything');
  assert.ok(prompts.length > 0);
  const simple = prompts.find((p) => !(p.arguments ?? []).some((a) => a.required));
  const got = await pool.getPrompt('everything', simple.name);
  assert.ok(got.messages.length > 0);
  return resources;
}

test('server-everything over stdio, with a resource subscription', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  await pool.addServer(everythingStdioInput());
  const resources = await exercise(pool);

  const uri = resources[0].uri;
  await pool.subscribeResource('everything', uri);
  // server-everything sends updates for subscribed resources every 5 s once toggled on.
  const updated = waitEvent(pool, 'resource:updated', (e) => e.uri === uri, 12_000);
  await pool.callTool('mcp__everything__toggle-subscriber-updates', {});
  const ev = await updated;
  assert.equal(ev.serverId, (await pool.getServer('everything')).id);
  await pool.unsubscribeResource('everything', uri);
});

test('server-everything over Streamable HTTP', async (t) => {
  const url = await startEverythingHttp(t);
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  const rec = await pool.addServer({ name: 'everything', config: { url } });
  assert.equal(rec.type, 'http');
  const result = await pool.testServer('everything');
  assert.equal(result.success, true, result.error);
  await exercise(pool);
});

test('a tool that runs as a task (FastMCP with fastmcp-tasks) is called like any other', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  const [command, ...args] = tasksServer;
  await pool.addServer({ name: 'tasks', config: { command, args } });
  // `crunch` requires a task: the core follows it to its result.
  const result = await pool.callTool('mcp__tasks__crunch', { n: 2 });
  assert.equal(text(result), 'crunched 2');
  assert.notEqual(result.isError, true);
});
