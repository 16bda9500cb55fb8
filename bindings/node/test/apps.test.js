'use strict';
// MCP Apps: a view handed over checked, its bridge answering it, its calls kept to its server
// and to the tools apps may call; against the test server's app (`--apps`).
const test = require('node:test');
const assert = require('node:assert/strict');

const { AppBridge, InvalidArgumentError, NotFoundError, Pool } = require('mcpmux');

const { testOptions, testServerInput, text } = require('./helpers');

async function appPool(t, options = { apps: {} }) {
  const pool = await Pool.open(testOptions(t, options));
  t.after(() => pool.close());
  await pool.addServer(testServerInput('app', ['--apps']));
  return pool;
}

test('a view comes with its policy, and calls only its own tools for apps', async (t) => {
  const pool = await appPool(t);
  const view = await pool.appView('mcp__app__dashboard');
  assert.equal(view.resourceUri, 'ui://test/dashboard.html');
  assert.equal(view.mimeType, 'text/html;profile=mcp-app');
  assert.match(view.html, /test dashboard/);
  assert.deepEqual(view.csp.connectDomains, ['https://api.example.com']);
  assert.match(view.contentSecurityPolicy, /connect-src 'self' https:\/\/api\.example\.com;/);
  assert.equal(view.allow, 'camera');
  assert.equal(view.tool.name, 'dashboard');

  assert.equal(text(await pool.appCall(view, 'refresh', { city: 'Oslo' })), 'refreshed Oslo');
  await assert.rejects(pool.appCall(view, 'secret', {}), (e) => e instanceof InvalidArgumentError && /visibility/.test(e.message));
  await assert.rejects(pool.appCall(view, 'nope', {}), NotFoundError);
  const read = await pool.appReadResource(view, 'test://hello');
  assert.equal(read.contents.length, 1);
  // The model never sees the view's own tool.
  const hits = await pool.searchTools('refresh the dashboard figures');
  assert.ok(hits.every((h) => h.name !== 'refresh'), JSON.stringify(hits));
});

test('the bridge answers the view and tells it the input and result once initialized', async (t) => {
  const pool = await appPool(t);
  const bridge = pool.appBridge(await pool.appView('mcp__app__dashboard'), { theme: 'light' });
  assert.ok(bridge instanceof AppBridge);
  assert.equal(bridge.view.toolId, 'mcp__app__dashboard');
  assert.deepEqual(bridge.toolInput({ city: 'Rome' }), []);
  const result = await pool.callTool('mcp__app__dashboard', { city: 'Rome' });
  assert.deepEqual(bridge.toolResult(result), []);

  const init = await bridge.handle({
    jsonrpc: '2.0',
    id: 1,
    method: 'ui/initialize',
    params: { appCapabilities: {}, appInfo: { name: 'v', version: '1' }, protocolVersion: '2026-01-26' },
  });
  assert.equal(init.post[0].result.hostContext.theme, 'light');
  assert.equal(init.post[0].result.hostContext.toolInfo.tool.name, 'dashboard');
  const ready = await bridge.handle({ jsonrpc: '2.0', method: 'ui/notifications/initialized' });
  assert.deepEqual(
    ready.post.map((m) => m.method),
    ['ui/notifications/tool-input', 'ui/notifications/tool-result'],
  );
  assert.equal(ready.post[1].params.content[0].text, 'sunny in Rome');

  const called = await bridge.handle({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'refresh', arguments: { city: 'Lyon' } },
  });
  assert.equal(called.post[0].result.content[0].text, 'refreshed Lyon');
  const link = { jsonrpc: '2.0', id: 3, method: 'ui/open-link', params: { url: 'https://example.com' } };
  const forHost = await bridge.handle(link);
  assert.deepEqual(forHost, { post: [], host: link });
  assert.deepEqual(AppBridge.reply(3, new Error('no')), {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32000, message: 'no' },
  });
  assert.deepEqual(bridge.reply('a', { opened: true }), { jsonrpc: '2.0', id: 'a', result: { opened: true } });
  assert.deepEqual(AppBridge.reply(4), { jsonrpc: '2.0', id: 4, result: {} });
  for (const noRequestId of [{ id: 3 }, undefined, true]) {
    assert.throws(() => AppBridge.reply(noRequestId, {}), InvalidArgumentError);
  }
  await assert.rejects(bridge.handle('not an object'), InvalidArgumentError);
});

test('without the apps option views are refused, saying how to turn them on', async (t) => {
  const pool = await appPool(t, {});
  await assert.rejects(pool.appView('mcp__app__dashboard'), (e) => e instanceof InvalidArgumentError && /apps/.test(e.message));
});
