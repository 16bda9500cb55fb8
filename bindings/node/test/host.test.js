'use strict';
// The application's side of a pool: host tools, sampling/elicitation handlers, roots,
// recipes, the canvas and conversations, against the real test server.
const test = require('node:test');
const assert = require('node:assert/strict');

const { Pool, EVENT_NAMES, InvalidArgumentError, ShuttingDownError } = require('mcpmux');
const { testOptions, testServerInput, everythingStdioInput, waitEvent, text } = require('./helpers');

async function openPool(t, extra) {
  const pool = await Pool.open(testOptions(t, extra));
  t.after(() => pool.close());
  return pool;
}

const ADD_SCHEMA = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
};

test('event names come from core, agent and widget events included', () => {
  for (const name of ['connection:state', 'tool:called', 'widget', 'agent:turn', 'agent:tool_use', 'agent:tool_result']) {
    assert.ok(EVENT_NAMES.includes(name), name);
  }
  assert.ok(Object.isFrozen(EVENT_NAMES));
});

test('host tools: sync and async functions, strings and objects, throws become error results', async (t) => {
  const pool = await openPool(t);
  const changed = waitEvent(pool, 'tools:changed', (e) => e.serverId === 'local');
  const info = pool.registerTool({
    name: 'add',
    description: 'Add two numbers',
    inputSchema: ADD_SCHEMA,
    handler: ({ a, b }) => String(a + b),
  });
  await changed;
  assert.equal(info.id, 'add');
  assert.equal(info.serverName, 'local');
  pool.registerTool({
    name: 'lookup',
    description: 'Looks something up, slowly',
    inputSchema: { type: 'object', properties: { key: { type: 'string' } } },
    handler: async ({ key }) => {
      await new Promise((r) => setTimeout(r, 20));
      return { key, found: true };
    },
  });
  pool.registerTool({
    name: 'raw',
    handler: () => ({ content: [{ type: 'text', text: 'as is' }], isError: false }),
  });
  pool.registerTool({ name: 'nothing', handler: () => undefined });
  pool.registerTool({
    name: 'boom',
    handler: () => {
      throw new Error('kaboom');
    },
  });
  pool.registerTool({ name: 'reject', handler: async () => Promise.reject(new TypeError('no way')) });
  pool.registerTool({ name: 'unserializable', handler: () => ({ n: 1n }) });

  assert.equal(text(await pool.callTool('add', { a: 2, b: 40 })), '42');
  const looked = await pool.callTool('lookup', { key: 'k' });
  assert.deepEqual(looked.structuredContent, { key: 'k', found: true });
  assert.deepEqual(JSON.parse(text(looked)), { key: 'k', found: true });
  assert.equal(text(await pool.callTool('raw')), 'as is');
  assert.deepEqual((await pool.callTool('nothing')).content, []);
  for (const [name, message] of [['boom', 'kaboom'], ['reject', 'no way'], ['unserializable', /JSON/]]) {
    const r = await pool.callTool(name, {});
    assert.equal(r.isError, true, name);
    assert.match(text(r), message instanceof RegExp ? message : new RegExp(message));
  }
  // Arguments are checked against the schema before the function runs.
  const bad = await pool.callTool('add', { a: 'two' });
  assert.equal(bad.isError, true);
  assert.match(text(bad), /invalid arguments/);
  assert.deepEqual(bad.structuredContent.schema, ADD_SCHEMA);

  // Listed and searched with the servers' tools.
  const ids = (await pool.listTools()).map((tool) => tool.id);
  assert.ok(ids.includes('add') && ids.includes('lookup'), ids.join());
  assert.equal((await pool.searchTools('add two numbers', { limit: 1 }))[0].id, 'add');

  assert.equal(pool.unregisterTool('add'), true);
  assert.equal(pool.unregisterTool('add'), false);
  await assert.rejects(pool.callTool('add', { a: 1, b: 2 }), { code: 'not_found' });
});

test('host tools: bad registrations are clear errors', async (t) => {
  const pool = await openPool(t);
  assert.throws(() => pool.registerTool({ name: 'has space', handler: () => '' }), { code: 'invalid_argument', message: /A-Za-z0-9/ });
  assert.throws(() => pool.registerTool({ name: 'x', inputSchema: { type: 'string' }, handler: () => '' }), {
    code: 'invalid_argument',
    message: /object schema/,
  });
  assert.throws(() => pool.registerTool({ name: 'x' }), InvalidArgumentError);
  assert.throws(() => pool.registerTool('x'), InvalidArgumentError);
});

test('a host tool gets an AbortSignal that fires when the call is cancelled', async (t) => {
  const pool = await openPool(t);
  let aborted;
  const started = new Promise((resolve) => {
    pool.registerTool({
      name: 'wait',
      handler: (_args, { signal }) =>
        new Promise((res) => {
          resolve();
          aborted = new Promise((r) => signal.addEventListener('abort', () => r(signal.reason)));
          setTimeout(() => res('late'), 5000).unref();
        }),
    });
  });
  const controller = new AbortController();
  const call = pool.callTool('wait', {}, { signal: controller.signal });
  await started;
  controller.abort();
  await assert.rejects(call, { code: 'cancelled' });
  const reason = await aborted;
  assert.equal(reason.code, 'cancelled');
});

test('sampling, elicitation and roots handlers answer a server (2026-07-28 input rounds)', async (t) => {
  const pool = await openPool(t);
  const asked = [];
  pool.setSamplingHandler(async (request) => {
    asked.push(request);
    await new Promise((r) => setTimeout(r, 10));
    return { role: 'assistant', content: { type: 'text', text: 'hi from js' }, model: 'js-model' };
  });
  pool.setElicitationHandler((request) => {
    asked.push(request);
    return { name: 'Grace' }; // plain content: accepted
  });
  await pool.setRoots([{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b' }]);
  assert.deepEqual(pool.roots().map((r) => r.uri), ['file:///a', 'file:///b']);
  await pool.addServer(testServerInput('t'));
  assert.equal(text(await pool.callTool('mcp__t__ask', {})), 'name="Grace" sample="hi from js" roots=2');
  assert.equal(asked.length, 2);
  for (const r of asked) assert.equal(r.serverName, 't');
  const sampling = asked.find((r) => r.params.messages);
  assert.equal(sampling.params.messages[0].content.text, 'Say hi');

  // Per-server roots override the pool's; null goes back.
  await pool.setServerRoots('t', [{ uri: 'file:///only' }]);
  assert.match(text(await pool.callTool('mcp__t__ask', {})), /roots=1$/);
  await pool.setServerRoots('t', null);
  assert.match(text(await pool.callTool('mcp__t__ask', {})), /roots=2$/);
  await assert.rejects(pool.setServerRoots('nope', []), { code: 'not_found' });
  await assert.rejects(pool.setRoots([{ name: 'no uri' }]), { code: 'invalid_argument' });

  // A string answer is the sample's text; null declines the elicitation.
  pool.setSamplingHandler(() => 'plain text');
  pool.setElicitationHandler(async () => null);
  const r = await pool.callTool('mcp__t__ask', {});
  assert.match(text(r), /sample="plain text"/);
  assert.doesNotMatch(text(r), /Grace/);
  // A handler that throws refuses with its message (here the server's tool fails with it).
  pool.setElicitationHandler(() => {
    throw new Error('user closed the dialog');
  });
  await assert.rejects(pool.callTool('mcp__t__ask', {}), { message: /user closed the dialog/ });
  pool.setSamplingHandler(null);
  pool.setElicitationHandler(null);
});

test('prompts and resources of a 2026-07-28 server ask the host first (input rounds)', async (t) => {
  const pool = await openPool(t, { maxInputRounds: 3 });
  const asked = [];
  pool.setElicitationHandler(async (request) => {
    asked.push(request);
    return { name: 'Lin' };
  });
  await pool.addServer(testServerInput('t'));
  const prompt = await pool.getPrompt('t', 'ask');
  assert.equal(prompt.messages[0].content.text, 'Hello, Lin!');
  const read = await pool.readResource('t', 'test://ask');
  assert.equal(read.contents[0].text, 'asked for Lin');
  // Rounds with only the server's state need nothing of the host.
  assert.equal((await pool.readResource('t', 'test://wait')).contents[0].text, 'waited two rounds');
  assert.equal(asked.length, 2);
  for (const r of asked) assert.equal(r.serverName, 't');
  // The pool's cap on rounds.
  await assert.rejects(pool.readResource('t', 'test://ask-forever'), {
    code: 'protocol',
    message: /still asking for input after 3 rounds/,
  });
});

test('a roots handler answers a server with its name; a throw reaches the caller', async (t) => {
  const pool = await openPool(t);
  pool.setSamplingHandler(() => 'hi');
  pool.setElicitationHandler(() => ({ name: 'Ada' }));
  // URI strings are roots too.
  await pool.setRoots(['file:///from-the-list']);
  assert.deepEqual(pool.roots(), [{ uri: 'file:///from-the-list' }]);
  const asked = [];
  pool.setRootsHandler(async (request, { signal }) => {
    asked.push(request);
    assert.ok(signal instanceof AbortSignal);
    await new Promise((r) => setTimeout(r, 10));
    return ['file:///a', { uri: 'file:///b', name: 'b' }, 'file:///c'];
  });
  await pool.addServer(testServerInput('t'));
  assert.equal(text(await pool.callTool('mcp__t__ask', {})), 'name="Ada" sample="hi" roots=3');
  assert.equal(asked.length, 1);
  assert.deepEqual(asked[0], { serverId: (await pool.getServer('t')).id, serverName: 't', params: {} });

  // Asked again on each request; a sync handler works too.
  pool.setRootsHandler(({ serverName }) => [`file:///${serverName}`]);
  assert.match(text(await pool.callTool('mcp__t__ask', {})), /roots=1$/);

  // A throw is an error to the server, whose tool call fails with the message.
  pool.setRootsHandler(() => {
    throw new Error('no roots for you');
  });
  await assert.rejects(pool.callTool('mcp__t__ask', {}), { message: /no roots for you/ });
  pool.setRootsHandler(async () => Promise.reject(new Error('rejected roots')));
  await assert.rejects(pool.callTool('mcp__t__ask', {}), { message: /rejected roots/ });
  // Answers that are not roots are errors too, that say so.
  pool.setRootsHandler(() => 'file:///x');
  await assert.rejects(pool.callTool('mcp__t__ask', {}), { message: /roots are a list of/ });
  pool.setRootsHandler(() => [{ name: 'no uri' }]);
  await assert.rejects(pool.callTool('mcp__t__ask', {}), { message: /a root is a URI or/ });

  // null goes back to the lists.
  pool.setRootsHandler(null);
  await pool.setServerRoots('t', ['file:///x', 'file:///y']);
  assert.match(text(await pool.callTool('mcp__t__ask', {})), /roots=2$/);
  assert.throws(() => pool.setRootsHandler('nope'), InvalidArgumentError);
  await pool.notifyRootsChanged();
});

test('server-everything sees the roots handler after notifyRootsChanged', async (t) => {
  const pool = await openPool(t);
  await pool.setRoots([{ uri: 'file:///tmp/mcpmux-list', name: 'list' }]);
  await pool.addServer(everythingStdioInput());
  await pool.connect('everything');
  const roots = async () => text(await pool.callTool('mcp__everything__get-roots-list', {}));
  // The server learns its roots after connecting; wait for the list's.
  const until = async (pred) => {
    let out;
    for (let i = 0; i < 50; i++) {
      out = await roots();
      if (pred(out)) return out;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`the server never saw the expected roots: ${out}`);
  };
  await until((out) => out.includes('file:///tmp/mcpmux-list'));

  const asked = [];
  pool.setRootsHandler(({ serverName }) => {
    asked.push(serverName);
    return [{ uri: 'file:///tmp/mcpmux-from-js', name: 'from js' }];
  });
  await pool.notifyRootsChanged();
  const out = await until((o) => o.includes('file:///tmp/mcpmux-from-js'));
  assert.doesNotMatch(out, /mcpmux-list/);
  assert.ok(asked.length >= 1 && asked.every((n) => n === 'everything'), asked.join());

  pool.setRootsHandler(null);
  await pool.notifyRootsChanged();
  await until((o) => o.includes('file:///tmp/mcpmux-list'));
});

test('recipes, widget_display and the canvas', async (t) => {
  const pool = await openPool(t);
  const recipe = pool.registerRecipe(`---
widget: weather_card
description: Shows the weather of a city
schema:
  type: object
  properties:
    city: { type: string }
  required: [city]
---
Use it when the user asks about the weather.`);
  assert.equal(recipe.name, 'weather_card');
  assert.match(recipe.body, /weather/);
  assert.deepEqual(pool.listRecipes(), [{ name: 'weather_card', description: 'Shows the weather of a city' }]);
  assert.equal(pool.getRecipe('weather_card').schema.required[0], 'city');
  assert.equal(pool.getRecipe('nope'), null);
  assert.equal(pool.searchRecipes('weather city', { limit: 3 })[0].name, 'weather_card');
  assert.throws(() => pool.registerRecipe('no front matter'), { code: 'invalid_argument' });

  const changes = [];
  const unsubscribe = pool.onCanvas((c) => changes.push(c));
  const seen = [];
  pool.onCanvas((c) => seen.push(c.change)); // ended by close()
  const widget = waitEvent(pool, 'widget');
  const r = await pool.callTool('widget_display', { name: 'weather_card', params: { city: 'Oslo' } });
  assert.notEqual(r.isError, true, text(r));
  const e = await widget;
  assert.equal(e.name, 'weather_card');
  assert.deepEqual(e.params, { city: 'Oslo' });
  const canvas = pool.canvas();
  assert.equal(canvas.widgets.length, 1);
  assert.equal(canvas.widgets[0].id, e.id);
  const invalid = await pool.callTool('widget_display', { name: 'weather_card', params: {} });
  assert.equal(invalid.isError, true);

  // Subscribers saw the widget arrive, then every change.
  const moved = await pool.callTool('canvas', { action: 'move', id: e.id, params: { x: 10, y: 20 } });
  assert.notEqual(moved.isError, true, text(moved));
  await pool.callTool('canvas', { action: 'clear', id: e.id });
  const settle = async (n) => {
    for (let i = 0; i < 100 && changes.length < n; i++) await new Promise((res) => setTimeout(res, 20));
  };
  await settle(3);
  assert.deepEqual(changes.map((c) => c.change), ['added', 'updated', 'removed']);
  assert.equal(changes[0].widget.id, e.id);
  assert.equal(changes[0].widget.kind, 'weather_card');
  assert.deepEqual(changes[0].widget.params, { city: 'Oslo' });
  assert.deepEqual(changes[1].widget.position, { x: 10, y: 20 });
  assert.equal(changes[2].id, e.id);

  // After unsubscribing, nothing more (the other subscriber still gets it).
  unsubscribe();
  unsubscribe(); // idempotent
  await pool.callTool('widget_display', { name: 'weather_card', params: { city: 'Bergen' } });
  await pool.callTool('canvas', { action: 'clear' });
  for (let i = 0; i < 100 && seen.length < 5; i++) await new Promise((res) => setTimeout(res, 20));
  assert.deepEqual(seen, ['added', 'updated', 'removed', 'added', 'cleared']);
  assert.equal(changes.length, 3);
  assert.throws(() => pool.onCanvas('nope'), InvalidArgumentError);

  await pool.close();
  assert.throws(() => pool.onCanvas(() => {}), ShuttingDownError);
});

test('conversation: discovery tools first, activation on first use, server filters', async (t) => {
  const pool = await openPool(t);
  await pool.addServer(testServerInput('t'));
  await pool.listTools(); // known tools feed the layers
  const conv = pool.conversation();
  let names = conv.tools().map((d) => d.name);
  assert.ok(names.includes('search_tools') && names.includes('t_mcp_list_tools'), names.join());
  assert.ok(!names.some((n) => n.startsWith('mcp__')), names.join());
  assert.deepEqual(conv.activated(), []);
  const listed = await conv.call('t_mcp_list_tools', {});
  assert.match(text(listed), /mcp__t__echo/);
  const r = await conv.call('mcp__t__echo', { text: 'via conversation' });
  assert.equal(text(r), 'via conversation');
  assert.equal(conv.activated().length, 1);
  names = conv.tools().map((d) => d.name);
  assert.ok(names.includes('mcp__t__echo'), names.join());

  const controller = new AbortController();
  const slow = conv.call('mcp__t__sleep', { ms: 10_000 }, { signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(slow, { code: 'cancelled' });

  const without = pool.conversation({ servers: { disabled: ['t'] } });
  assert.ok(!without.tools().some((d) => d.name.startsWith('t_mcp_')));
  await assert.rejects(without.call('mcp__t__echo', { text: 'x' }), { code: 'invalid_argument', message: /disabled/ });
  assert.throws(() => pool.conversation({ servers: { nope: 1 } }), { code: 'invalid_argument' });
});
