'use strict';
// A pool served as one MCP server over Streamable HTTP (`pool.serveHttp()`), used by another
// pool as a remote server: real servers and real HTTP only.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');

const { Pool, HttpServer, ConnectionError, InvalidArgumentError, ShuttingDownError } = require('mcpmux');
const { runNode, testOptions, testServerInput, text } = require('./helpers');

/** A pool with the test server (as `tests`), served over HTTP with `settings`. */
async function served(t, settings) {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  await pool.addServer(testServerInput('tests'));
  const server = await pool.serveHttp(settings);
  t.after(() => server.stop());
  return { pool, server };
}

/** A second pool, with its own config, that has `url` as its remote server `served`. */
async function client(t, url, headers) {
  const pool = await Pool.open(testOptions(t, { connectTimeoutMs: 10_000 }));
  t.after(() => pool.close());
  // A refused token must never send anyone to a browser.
  pool.setTokenStore('memory');
  pool.setOAuthHandler(
    () => {
      throw new Error('no OAuth here');
    },
    { redirectUri: 'http://127.0.0.1:9/callback' },
  );
  await pool.addServer({ name: 'served', config: { url, headers, strictTransport: true } });
  return pool;
}

/** Whether something accepts TCP connections on `url`'s port. */
function accepts(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(port), hostname);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

test('another pool calls the served pool’s tools over HTTP with the bearer token', async (t) => {
  const { server } = await served(t);
  assert.ok(server instanceof HttpServer);
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.match(server.token, /^[0-9a-f]{64}$/);
  assert.equal(server.listening, true);

  const remote = await client(t, server.url, { Authorization: `Bearer ${server.token}` });
  const tools = await remote.listTools('served');
  const ids = tools.map((tool) => tool.id);
  // Served names are SERVER__TOOL; the client pool puts its own prefix in front.
  assert.ok(ids.includes('mcp__served__tests__echo'), ids.join(', '));
  const result = await remote.callTool('mcp__served__tests__echo', { text: 'through two pools' });
  assert.equal(text(result), 'through two pools');
});

test('settings reach core: serverName, search mode, a fixed token', async (t) => {
  const { server } = await served(t, { mode: 'search', serverName: 'app', token: 'fixed-token-of-the-test' });
  assert.equal(server.token, 'fixed-token-of-the-test');
  const remote = await client(t, server.url, { Authorization: 'Bearer fixed-token-of-the-test' });
  const status = await remote.connect('served');
  assert.equal(status.state, 'connected');
  assert.equal(status.serverInfo?.name, 'app');
  const names = (await remote.listTools('served')).map((tool) => tool.name).sort();
  assert.deepEqual(names, ['call_tool', 'describe_tools', 'search_tools']);
});

test('a wrong token or none: the client cannot connect', async (t) => {
  const { server } = await served(t);
  const bare = await fetch(server.url, { method: 'POST', body: '{}' });
  assert.equal(bare.status, 401);
  assert.equal(bare.headers.get('www-authenticate'), 'Bearer');

  const remote = await client(t, server.url, { Authorization: 'Bearer not-the-token' });
  await assert.rejects(remote.connect('served'), ConnectionError);
  assert.notEqual(remote.serverStates().find((s) => s.name === 'served').state, 'connected');
});

test('noAuth on loopback: no token', async (t) => {
  const { server } = await served(t, { noAuth: true });
  assert.equal(server.token, null);
  const remote = await client(t, server.url, {});
  assert.equal(text(await remote.callTool('mcp__served__tests__echo', { text: 'open' })), 'open');
});

test('bad settings reject with InvalidArgumentError naming the fix', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  const cases = [
    [{ addr: 'localhost' }, /127\.0\.0\.1:8808/],
    [{ noAuth: true, addr: '0.0.0.0:0' }, /listen on 127\.0\.0\.1, or keep the token/],
    [{ mode: 'all' }, /direct, search or auto/],
    [{ token: 't', noAuth: true }, /give a token or noAuth, not both/],
    [{ token: ' ' }, /empty/],
    [{ token: 'sesame' }, /fewer than 16 characters/],
    [{ port: 8808 }, /unknown field `port`/],
    [{ sessionKey: 'short' }, /openssl rand -hex 32/],
    [{ oauth: { issuer: 'https://a.example' }, token: 't' }, /give oauth, or a token/],
    [{ oauth: { issuer: 'http://auth.example.com' } }, /is not HTTPS/],
    [{ oauth: { issuer: 'https://a.example', scope: 'x' } }, /unknown field `scope`/],
  ];
  for (const [settings, message] of cases) {
    await assert.rejects(pool.serveHttp(settings), (err) => {
      assert.ok(err instanceof InvalidArgumentError, `${JSON.stringify(settings)}: ${err}`);
      assert.equal(err.code, 'invalid_argument');
      assert.match(err.message, message);
      return true;
    });
  }
  await assert.rejects(pool.serveHttp('127.0.0.1:0'), InvalidArgumentError);
  await assert.rejects(pool.serveHttp({ autoLimit: -1 }), InvalidArgumentError);
});

test('an OAuth issuer whose keys cannot be read rejects with ConnectionError', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  // Nothing listens on port 1: the key set (given, so no metadata is looked for) is
  // unreadable, and serving does not start with tokens it could never check.
  const oauth = { issuer: 'http://127.0.0.1:1', jwksUri: 'http://127.0.0.1:1/jwks' };
  await assert.rejects(pool.serveHttp({ oauth }), (err) => {
    assert.equal(err.code, 'connection', String(err));
    assert.match(err.message, /the issuer's keys cannot be read: http:\/\/127\.0\.0\.1:1\/jwks/);
    return true;
  });
});

test('an address already in use rejects with IoError', async (t) => {
  const { pool, server } = await served(t);
  const addr = new URL(server.url).host;
  await assert.rejects(pool.serveHttp({ addr }), (err) => err.code === 'io' && err.message.includes(addr));
});

test('after stop() the port refuses connections; stop() is idempotent', async (t) => {
  const { server } = await served(t);
  assert.equal(await accepts(server.url), true);
  await server.stop();
  assert.equal(server.listening, false);
  assert.equal(await accepts(server.url), false);
  await server.stop();
});

test('closing the pool stops its servers', async (t) => {
  const { pool, server } = await served(t);
  const other = await pool.serveHttp({ noAuth: true });
  assert.notEqual(other.url, server.url);
  await pool.close();
  assert.equal(server.listening, false);
  assert.equal(other.listening, false);
  assert.equal(await accepts(server.url), false);
  assert.equal(await accepts(other.url), false);
  await server.stop();
  await assert.rejects(pool.serveHttp(), ShuttingDownError);
});

test('HttpServer is made by serveHttp only', () => {
  assert.throws(() => new HttpServer(), TypeError);
});

// --- process lifetime (test/fixtures/serve-exit.js) ----------------------------------------------

const script = path.join(__dirname, 'fixtures', 'serve-exit.js');

test('a listening server keeps the process alive until stop(), and nothing after', async () => {
  const r = await runNode([script, 'listening']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'serving\nstopped\n');
  assert.ok(r.ms >= 1500, `${r.ms} ms`);
});

test('an unref()ed server does not keep the process alive', async () => {
  const r = await runNode([script, 'unref']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'serving\nunref\n');
});

test('closing the pool lets the process exit', async () => {
  const r = await runNode([script, 'close']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'serving\nclosed false\n');
});

test('a server nobody refers to keeps serving through garbage collection', async () => {
  const r = await runNode(['--expose-gc', script, 'gc']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'serving\nafter gc 200\n');
});

test('terminating the worker that serves closes the port', async () => {
  const r = await runNode([script, 'worker'], { timeoutMs: 60_000 });
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.signal, null, `crashed: ${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'worker serving true\nafter terminate false\n');
});
