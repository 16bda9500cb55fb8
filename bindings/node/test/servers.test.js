'use strict';
// Opening pools and managing the server list, against the real test server.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');

const mcpmux = require('mcpmux');
const { Pool, McpmuxError, InvalidArgumentError, InvalidConfigError, NotFoundError, ShuttingDownError } = mcpmux;
const { testOptions, testServerInput, tempConfig, waitEvent, testServer } = require('./helpers');

async function open(t, extra) {
  const pool = await Pool.open(testOptions(t, extra));
  t.after(() => pool.close());
  return pool;
}

test('Pool.open maps options and rejects unknown ones with a clear error', async (t) => {
  const configPath = tempConfig(t);
  await assert.rejects(Pool.open({ configPath, requestTimeoutMs: 5, nope: true }), (err) => {
    assert.ok(err instanceof InvalidArgumentError);
    assert.ok(err instanceof McpmuxError);
    assert.equal(err.code, 'invalid_argument');
    assert.match(err.message, /unknown field `nope`/);
    return true;
  });
  await assert.rejects(Pool.open({ configPath, requestTimeoutMs: 'soon' }), { code: 'invalid_argument' });
  await assert.rejects(Pool.open('not an object'), { code: 'invalid_argument' });
  assert.throws(() => new Pool(), TypeError);

  const pool = await Pool.open({ configPath, clientName: 'node-test', connectOnAdd: false });
  assert.equal(pool.configPath, configPath);
  assert.deepEqual(await pool.listServers(), []);
  await pool.close();
});

test('an unusable config file is an InvalidConfigError and is left untouched', async (t) => {
  const configPath = tempConfig(t);
  fs.writeFileSync(configPath, '{ this is not json');
  await assert.rejects(Pool.open({ configPath }), (err) => {
    assert.ok(err instanceof InvalidConfigError, String(err));
    assert.equal(err.code, 'invalid_config');
    return true;
  });
  assert.equal(fs.readFileSync(configPath, 'utf8'), '{ this is not json');
});

test('add, get, list, update and remove servers', async (t) => {
  const pool = await open(t);
  const changed = waitEvent(pool, 'servers:changed');
  const rec = await pool.addServer(testServerInput('alpha', ['--name', 'alpha']));
  assert.deepEqual(await changed, { type: 'servers:changed' });
  assert.match(rec.id, /^mcp_\d+_[a-z0-9]+$/);
  assert.equal(rec.name, 'alpha');
  assert.equal(rec.type, 'stdio');
  assert.equal(rec.config.command, testServer);
  assert.equal(rec.isActive, true);

  assert.deepEqual(await pool.getServer('alpha'), rec);
  assert.deepEqual(await pool.getServer(rec.id), rec);
  assert.deepEqual(await pool.listServers(), [rec]);

  const updated = await pool.updateServer('alpha', { name: 'beta', disabledTools: ['fail'] });
  assert.equal(updated.id, rec.id);
  assert.equal(updated.name, 'beta');
  assert.deepEqual(updated.disabledTools, ['fail']);
  assert.ok(updated.updatedAt >= rec.createdAt);
  await assert.rejects(pool.updateServer('beta', { bogus: 1 }), { code: 'invalid_argument', message: /bogus/ });

  // The record is on disk: a second pool over the same file sees it.
  const other = await Pool.open({ configPath: pool.configPath, connectOnAdd: false });
  assert.deepEqual((await other.listServers()).map((s) => s.name), ['beta']);
  await other.close();

  // The server again as first added (a host adding it at every start) is the one saved,
  // with what was changed since; another under its name is refused, naming what differs.
  const again = await pool.addServer(testServerInput('beta', ['--name', 'alpha']));
  assert.equal(again.id, rec.id);
  assert.deepEqual(again.disabledTools, ['fail']);
  await assert.rejects(pool.addServer({ ...testServerInput('beta'), disabledTools: ['fail'] }), {
    code: 'invalid_argument',
    message: /already exists \(id mcp_\w+\) with another config\.args: update that server/,
  });
  await assert.rejects(pool.addServer({ ...testServerInput('beta', ['--name', 'alpha']), isActive: false }), {
    code: 'invalid_argument',
    message: /with another isActive: update that server/,
  });
  await assert.rejects(pool.addServer({ name: 'x' }), { code: 'invalid_argument', message: /config/ });
  await assert.rejects(pool.addServer('nope'), InvalidArgumentError);

  const removed = await pool.removeServer(rec.id);
  assert.equal(removed.name, 'beta');
  assert.deepEqual(await pool.listServers(), []);
  await assert.rejects(pool.getServer('beta'), (err) => {
    assert.ok(err instanceof NotFoundError);
    assert.equal(err.code, 'not_found');
    assert.match(err.message, /server not found: beta/);
    return true;
  });
  await assert.rejects(pool.removeServer('beta'), { code: 'not_found' });
  await assert.rejects(pool.getServer(''), { code: 'invalid_argument' });
  await assert.rejects(pool.getServer(42), { code: 'invalid_argument' });
});

test('a perClient server is marked in its record; a typo is refused with the choices', async (t) => {
  const pool = await open(t);
  const shared = await pool.addServer(testServerInput('shared'));
  assert.equal(shared.sessionScope, undefined);
  const own = await pool.addServer({ ...testServerInput('own'), sessionScope: 'perClient', maxClients: 3 });
  assert.equal(own.sessionScope, 'perClient');
  assert.equal(own.maxClients, 3);
  const back = await pool.updateServer('own', { sessionScope: 'shared' });
  assert.equal(back.sessionScope, undefined);
  await assert.rejects(pool.addServer({ ...testServerInput('typo'), sessionScope: 'per-client' }), (err) => {
    assert.ok(err instanceof InvalidArgumentError, String(err));
    assert.match(err.message, /expected `shared` or `perClient`/);
    return true;
  });
  await assert.rejects(pool.addServer({ ...testServerInput('none'), maxClients: 0 }), /maxClients must be 1 or more/);
});

test('addJson imports each entry on its own, from text or an object', async (t) => {
  const pool = await open(t);
  const results = await pool.addJson(
    JSON.stringify({
      mcpServers: {
        good: { command: testServer, args: ['--name', 'good'] },
        bad: 'not an object',
      },
    }),
  );
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  assert.equal(byName.good.success, true);
  assert.equal(byName.good.record.name, 'good');
  assert.equal(byName.good.alreadyThere, false);
  assert.equal(byName.bad.success, false);
  assert.match(byName.bad.error, /must be an object/);

  const more = await pool.addJson({ servers: { web: { url: 'http://127.0.0.1:9/mcp' } } });
  assert.equal(more[0].success, true);
  assert.equal(more[0].record.type, 'http');
  assert.deepEqual((await pool.listServers()).map((s) => s.name).sort(), ['good', 'web']);
  // The same entry again (an import run twice) is found there, not added.
  const again = await pool.addJson({ servers: { web: { url: 'http://127.0.0.1:9/mcp' } } });
  assert.equal(again[0].alreadyThere, true);
  assert.equal(again[0].record.id, more[0].record.id);

  await assert.rejects(pool.addJson('{ nope'), { code: 'invalid_argument', message: /not valid JSON/ });
  await assert.rejects(pool.addJson(7), { code: 'invalid_argument' });
});

test('an imported server waits for approval, and runs once approved', async (t) => {
  const pool = await open(t);
  const pending = waitEvent(pool, 'server:pending');
  const [imported] = await pool.addJson({
    mcpServers: { a: { command: testServer, env: { API_KEY: 'sk-not-shown' } } },
  });
  assert.equal(imported.record.pending, true);
  const event = await pending;
  assert.equal(event.consent.command, testServer);
  assert.deepEqual(event.consent.envKeys, ['API_KEY']);
  assert.ok(!JSON.stringify(event).includes('sk-not-shown'));
  await assert.rejects(pool.connect('a'), { code: 'invalid_argument', message: /waits for your approval/ });
  assert.deepEqual((await pool.listTools()).filter((tool) => tool.serverName === 'a'), []);
  const approved = await pool.approveServer('a');
  assert.ok(!approved.pending);
  const echoed = await pool.callTool('mcp__a__echo', { text: 'hi' });
  assert.equal(echoed.content[0].text, 'hi');
});

test('testServer, testConfig and discover report what a server offers', async (t) => {
  const pool = await open(t);
  await pool.addServer(testServerInput('t'));
  const ok = await pool.testServer('t');
  assert.equal(ok.success, true);
  assert.ok(ok.tools.includes('echo') && ok.tools.includes('sleep'), ok.tools.join());
  assert.equal(typeof ok.durationMs, 'number');

  const bad = await pool.testConfig({ name: 'missing', config: { command: '/nonexistent/mcp-server' } });
  assert.equal(bad.success, false);
  assert.ok(bad.error.length > 0);

  const found = await pool.discover('t');
  assert.ok(found.tools.some((tool) => tool.name === 'echo'));
  assert.ok(found.prompts.some((p) => p.name === 'greet'));
  assert.ok(found.resources.some((r) => r.uri === 'test://hello'));

  await assert.rejects(pool.discover('nope'), { code: 'not_found' });
});

test('connection events, states, connect, disconnect and connectAll', async (t) => {
  const pool = await open(t);
  const rec = await pool.addServer(testServerInput('t'));
  assert.deepEqual(pool.serverStates().map((s) => [s.name, s.state]), [['t', 'disconnected']]);

  const seen = [];
  const listener = (e) => seen.push(e);
  pool.on('connection:state', listener);
  const connected = waitEvent(pool, 'server:connected');
  const ready = waitEvent(pool, 'connection:state', (e) => e.state === 'connected');
  const status = await pool.connect('t');
  assert.equal(status.state, 'connected');
  assert.ok(status.pid > 0);
  // What the server said of itself.
  assert.equal(status.instructions, 'Test server for mcpmux; every tool is deterministic.');
  assert.equal(status.serverInfo.name, 'mcpmux-test-server');
  assert.ok(status.capabilities.tools, JSON.stringify(status.capabilities));
  const [ev] = await Promise.all([connected, ready]);
  assert.equal(ev.serverId, rec.id);
  assert.equal(ev.serverName, 't');
  assert.match(ev.protocolVersion, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(seen.some((e) => e.state === 'connecting'), JSON.stringify(seen));
  assert.ok(seen.some((e) => e.state === 'connected' && e.phase === 'ready'), JSON.stringify(seen));
  assert.ok(seen.every((e) => e.type === 'connection:state' && e.serverId === rec.id));

  const closed = waitEvent(pool, 'connection:state', (e) => e.state === 'disconnected');
  await pool.disconnect('t');
  assert.equal((await closed).phase, 'closed');
  assert.equal(pool.serverStates()[0].state, 'disconnected');
  assert.ok(pool.serverStates()[0].instructions, 'kept after the connection closed');

  // off() really removes the listener.
  pool.off('connection:state', listener);
  const before = seen.length;
  await pool.addServer(testServerInput('u'));
  const all = await pool.connectAll();
  assert.deepEqual(all.map((s) => [s.name, s.state]), [['t', 'connected'], ['u', 'connected']]);
  assert.equal(seen.length, before);

  // once() fires once.
  let count = 0;
  pool.once('connection:state', () => count++);
  await pool.disconnect('u');
  await pool.connect('u');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(count, 1);
});

test('a closed pool refuses new work with ShuttingDownError', async (t) => {
  const pool = await Pool.open(testOptions(t));
  await pool.addServer(testServerInput('t'));
  await pool.close();
  assert.equal(pool.closed, true);
  await assert.rejects(pool.listTools(), (err) => {
    assert.ok(err instanceof ShuttingDownError);
    assert.equal(err.code, 'shutting_down');
    return true;
  });
  await assert.rejects(pool.callTool('mcp__t__echo', { text: 'x' }), { code: 'shutting_down' });
  await pool.close(); // idempotent
});

test('events reach listeners added after every earlier one went away', async (t) => {
  // The pool forwards core's events only while it has listeners: the last one leaving stops
  // the forwarding, and the next one starts it again.
  const pool = await open(t);
  await pool.addServer(testServerInput('t'));
  const echoed = (e) => e.toolName === 'echo';
  const [first] = await Promise.all([waitEvent(pool, 'tool:called', echoed), pool.callTool('mcp__t__echo', { text: 'a' })]);
  assert.equal(first.toolId, 'mcp__t__echo');
  assert.equal(pool.listenerCount('tool:called'), 0);
  await pool.callTool('mcp__t__add', { a: 1, b: 2 });
  const [second] = await Promise.all([waitEvent(pool, 'tool:called', echoed), pool.callTool('mcp__t__echo', { text: 'b' })]);
  assert.equal(second.success, true);
  // `once` listeners count too, and leave like any other. (Events do not keep Node alive:
  // `ref()` does while this waits for one.)
  pool.ref();
  const once = new Promise((resolve) => pool.once('tool:called', resolve));
  await pool.callTool('mcp__t__add', { a: 1, b: 2 });
  assert.equal((await once).toolName, 'add');
  pool.unref();
  assert.equal(pool.listenerCount('tool:called'), 0);
  // Clean-up code that removes every listener does not stop later ones from hearing.
  pool.on('log', () => {});
  pool.removeAllListeners();
  const [third] = await Promise.all([waitEvent(pool, 'tool:called', echoed), pool.callTool('mcp__t__echo', { text: 'c' })]);
  assert.equal(third.toolId, 'mcp__t__echo');
});

test("log events carry a stdio server's stderr; 'event' gets every event", async (t) => {
  const pool = await open(t);
  const all = [];
  pool.on('event', (e) => all.push(e.type));
  const rec = await pool.addServer(testServerInput('noisy', ['--stderr-lines', '3']));
  const line = waitEvent(pool, 'log', (e) => e.message.includes('test-server stderr line 3'));
  const connected = waitEvent(pool, 'server:connected');
  await pool.connect('noisy');
  // Events travel apart from promise results: wait for them, not for `connect`.
  const [ev] = await Promise.all([line, connected]);
  assert.equal(ev.serverId, rec.id);
  assert.equal(ev.source, 'stderr');
  assert.equal(typeof ev.level, 'string');
  for (const type of ['servers:changed', 'connection:state', 'server:connected', 'log']) {
    assert.ok(all.includes(type), `${type} missing from ${all}`);
  }
});

for (const [era, args] of [['modern', []], ['legacy', ['--legacy']]]) {
  test(`a ${era} server's changes arrive as events at once (no cache TTL)`, async (t) => {
    // 2026-07-28 servers tell them on the pool's subscriptions/listen stream, older ones
    // as plain notifications; either way within 2 s.
    const pool = await open(t);
    const rec = await pool.addServer(testServerInput(era, args));
    const mine = (e) => e.serverId === rec.id;
    const toolsChanged = waitEvent(pool, 'tools:changed', mine, 2000);
    await pool.callTool(`mcp__${era}__add_tool`, { name: 'late' });
    await toolsChanged;
    assert.ok((await pool.listTools(era)).some((tool) => tool.name === 'late'));

    const resourcesChanged = waitEvent(pool, 'resources:changed', mine, 2000);
    await pool.callTool(`mcp__${era}__notify`, { what: 'resources' });
    await resourcesChanged;

    await assert.rejects(pool.subscribeResource(era, 'test://secret'), (err) => {
      assert.equal(err.code, 'protocol');
      assert.match(err.message, /test:\/\/secret/);
      return true;
    });
    await pool.subscribeResource(era, 'test://hello');
    const updated = waitEvent(pool, 'resource:updated', (e) => mine(e) && e.uri === 'test://hello', 2000);
    await pool.callTool(`mcp__${era}__notify`, { what: 'updated', uri: 'test://hello' });
    await updated;

    // Logs at the level asked for: in each request's _meta on 2026-07-28, setLevel before.
    const record = await pool.updateServer(era, { logLevel: 'warning' });
    assert.equal(record.logLevel, 'warning');
    const quiet = await pool.callTool(`mcp__${era}__log`, { message: 'q', level: 'info' });
    assert.equal(quiet.content[0].text, 'not asked for');
    const logged = waitEvent(pool, 'log', (e) => mine(e) && e.message === '[test-server] loud', 2000);
    await pool.callTool(`mcp__${era}__log`, { message: 'loud', level: 'critical' });
    assert.equal((await logged).level, 'critical');
  });
}

test("a server gets none of this process's secrets unless asked, and never mcpmux's own", async (t) => {
  const saved = { ...process.env };
  t.after(() => {
    for (const key of ['OPENAI_API_KEY', 'MCPMUX_SERVE_TOKEN', 'APP_SETTING']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });
  // The pool spawns from this process's environment as it is when a server starts.
  process.env.OPENAI_API_KEY = 'sk-of-the-application';
  process.env.MCPMUX_SERVE_TOKEN = 'the-gateways-own-token-0123';
  process.env.APP_SETTING = 'only-when-inherited';
  const pool = await open(t);
  await pool.addServer({ name: 'plain', config: { command: testServer, env: { GIVEN: 'to-this-server' } } });
  const inherits = await pool.addServer({ name: 'inherits', config: { command: testServer, inheritEnv: true } });
  assert.equal(inherits.config.inheritEnv, true);
  const env = async (server, name) => {
    const r = await pool.callTool(`mcp__${server}__env`, { name });
    return r.content.map((c) => c.text).join('');
  };
  assert.equal(await env('plain', 'OPENAI_API_KEY'), 'OPENAI_API_KEY is not set');
  assert.equal(await env('plain', 'APP_SETTING'), 'APP_SETTING is not set');
  assert.equal(await env('plain', 'GIVEN'), 'to-this-server');
  assert.equal(await env('plain', 'PATH'), process.env.PATH);
  assert.equal(await env('inherits', 'APP_SETTING'), 'only-when-inherited');
  assert.equal(await env('inherits', 'OPENAI_API_KEY'), 'OPENAI_API_KEY is not set');
  assert.equal(await env('inherits', 'MCPMUX_SERVE_TOKEN'), 'MCPMUX_SERVE_TOKEN is not set');
});
