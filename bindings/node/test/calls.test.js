'use strict';
// Tools, resources and prompts through the pool, against the real test server.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Pool, CancelledError, TimeoutError, NotFoundError } = require('mcpmux');
const { nativeAddon, testOptions, testServerInput, waitEvent, text } = require('./helpers');

async function poolWithServer(t, extra) {
  const pool = await Pool.open(testOptions(t, extra));
  t.after(() => pool.close());
  await pool.addServer(testServerInput('t'));
  return pool;
}

test('listTools and callTool keep every part of a result', async (t) => {
  const pool = await poolWithServer(t);
  const tools = await pool.listTools();
  const ids = tools.map((tool) => tool.id);
  for (const name of ['echo', 'add', 'sleep', 'fail', 'structured']) {
    assert.ok(ids.includes(`mcp__t__${name}`), ids.join());
  }
  const echo = tools.find((tool) => tool.name === 'echo');
  assert.equal(echo.serverName, 't');
  assert.equal(echo.inputSchema.type, 'object');
  assert.deepEqual((await pool.listTools('t')).map((tool) => tool.id), ids);
  await assert.rejects(pool.listTools('nope'), { code: 'not_found' });

  const called = waitEvent(pool, 'tool:called');
  const r = await pool.callTool('mcp__t__echo', { text: 'héllo ✓' });
  assert.deepEqual(r.content, [{ type: 'text', text: 'héllo ✓' }]);
  assert.notEqual(r.isError, true);
  const ev = await called;
  assert.equal(ev.toolId, 'mcp__t__echo');
  assert.equal(ev.toolName, 'echo');
  assert.equal(ev.success, true);
  assert.equal(typeof ev.durationMs, 'number');

  assert.equal(text(await pool.callTool('mcp__t__add', { a: 2, b: 40 })), '42');
  const s = await pool.callTool('mcp__t__structured');
  assert.equal(typeof s.structuredContent, 'object');
  assert.deepEqual(JSON.parse(text(s)), s.structuredContent);

  // isError is a result, not an exception.
  const failed = await pool.callTool('mcp__t__fail', {});
  assert.equal(failed.isError, true);
});

test('errors of the addon carry their code as a property, not in the text', async (t) => {
  const native = nativeAddon();
  const plain = (err) => {
    // A JS Error with the code set, whose message is core's message alone.
    assert.ok(err instanceof Error);
    assert.doesNotMatch(err.message, /^mcpmux:/);
    return err;
  };
  // Thrown by a synchronous method.
  assert.throws(() => native.readHostAnswer('approval', '42'), (err) => plain(err).code === 'invalid_argument');
  // A rejected promise of an async method: openPool over a config file that is not JSON.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpmux-errors-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const configPath = path.join(dir, 'servers.json');
  fs.writeFileSync(configPath, '{ not json');
  await assert.rejects(native.openPool(JSON.stringify({ configPath })), (err) => {
    assert.equal(plain(err).code, 'invalid_config', err.message);
    assert.match(err.message, /servers\.json/);
    return true;
  });
  // A rejected callTool promise (its own settle path), before and after the class mapping.
  const pool = await poolWithServer(t);
  await assert.rejects(pool.callTool('mcp__t__nope', {}), (err) => {
    assert.ok(err instanceof NotFoundError);
    assert.equal(plain(err).code, 'not_found');
    assert.match(err.message, /mcp__t__nope/);
    return true;
  });
});

test('callTool errors carry the right code', async (t) => {
  const pool = await poolWithServer(t);
  await assert.rejects(pool.callTool('mcp__t__nope', {}), (err) => {
    assert.ok(err instanceof NotFoundError);
    assert.equal(err.code, 'not_found');
    return true;
  });
  await assert.rejects(pool.callTool('mcp__t__echo', [1, 2]), { code: 'invalid_argument' });
  await assert.rejects(pool.callTool('mcp__t__echo', { n: 1n }), { code: 'invalid_argument', message: /JSON/ });
  await assert.rejects(pool.callTool(''), { code: 'invalid_argument' });
  await assert.rejects(pool.callTool('mcp__t__echo', {}, { timeoutMs: -1 }), { code: 'invalid_argument' });
  await assert.rejects(pool.callTool('mcp__t__echo', {}, { timeoutMs: NaN }), { code: 'invalid_argument' });
  await assert.rejects(pool.callTool('mcp__t__echo', {}, { signal: {} }), { code: 'invalid_argument' });
  await assert.rejects(pool.callTool('mcp__t__echo', {}, { onProgress: 3 }), { code: 'invalid_argument' });
  // startTask takes the same options, checked the same way (before anything starts).
  for (const bad of [{ timeoutMs: -1 }, { signal: {} }, { onProgress: 3 }, { onTask: 'x' }]) {
    assert.throws(() => pool.startTask('mcp__t__echo', {}, bad), { code: 'invalid_argument' });
  }

  await pool.updateServer('t', { disabledTools: ['echo'] });
  await assert.rejects(pool.callTool('mcp__t__echo', { text: 'x' }), { code: 'invalid_argument', message: /disabled/ });

  await pool.addServer({ name: 'gone', config: { command: '/nonexistent/mcp-server' } });
  await assert.rejects(pool.listTools('gone'), (err) => {
    assert.equal(err.code, 'connection', err.message);
    return true;
  });
});

test('onProgress receives progress, and progress resets the timeout', async (t) => {
  const pool = await poolWithServer(t);
  const seen = [];
  const r = await pool.callTool('mcp__t__sleep', { ms: 1200 }, {
    timeoutMs: 500,
    onProgress: (p) => seen.push(p),
  });
  assert.equal(text(r), 'slept');
  assert.ok(seen.length >= 5, JSON.stringify(seen));
  assert.equal(seen[0].total, 1200);
  assert.match(seen[0].message, /slept \d+ of 1200 ms/);
  assert.ok(seen.every((p, i) => i === 0 || p.progress >= seen[i - 1].progress));
});

test('timeoutMs ends a call with TimeoutError', async (t) => {
  const pool = await poolWithServer(t);
  await pool.connect('t');
  const started = Date.now();
  // The server's first progress comes after 100 ms: a shorter timeout cannot be reset.
  await assert.rejects(pool.callTool('mcp__t__sleep', { ms: 5000 }, { timeoutMs: 40 }), (err) => {
    assert.ok(err instanceof TimeoutError, String(err));
    assert.equal(err.code, 'timeout');
    return true;
  });
  assert.ok(Date.now() - started < 2000);
  // The connection is still good.
  assert.equal(text(await pool.callTool('mcp__t__echo', { text: 'after' })), 'after');
});

test('a server that never answers times out on connect', async (t) => {
  const pool = await Pool.open(testOptions(t, { connectTimeoutMs: 500 }));
  t.after(() => pool.close());
  await pool.addServer(testServerInput('silent', ['--silent']));
  const started = Date.now();
  await assert.rejects(pool.listTools('silent'), { code: 'timeout' });
  assert.ok(Date.now() - started < 5000);
});

test('an aborted AbortSignal cancels the call in the server', async (t) => {
  const pool = await poolWithServer(t);
  await pool.connect('t');
  let progress = 0;
  pool.on('progress', () => progress++);

  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('user clicked stop')), 350);
  await assert.rejects(pool.callTool('mcp__t__sleep', { ms: 5000 }, { signal: controller.signal }), (err) => {
    assert.ok(err instanceof CancelledError, String(err));
    assert.equal(err.code, 'cancelled');
    assert.equal(err.cause.message, 'user clicked stop');
    return true;
  });
  assert.ok(Date.now() - started < 1500);
  assert.ok(progress >= 1, 'the call was running');
  // The server got notifications/cancelled and stopped sleeping: no progress any more.
  await new Promise((r) => setTimeout(r, 150));
  const after = progress;
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(progress, after, 'the server kept working after the cancellation');
  assert.equal(pool.inFlight, 0);

  // Already aborted: never starts.
  await assert.rejects(pool.callTool('mcp__t__echo', { text: 'x' }, { signal: AbortSignal.abort() }), {
    code: 'cancelled',
  });
  // A signal that fires after the call ended does nothing.
  const late = new AbortController();
  assert.equal(text(await pool.callTool('mcp__t__echo', { text: 'ok' }, { signal: late.signal })), 'ok');
  late.abort();
  assert.equal(text(await pool.callTool('mcp__t__echo', { text: 'still' })), 'still');
});

test('AbortSignal.timeout cancels too', async (t) => {
  const pool = await poolWithServer(t);
  await assert.rejects(
    pool.callTool('mcp__t__sleep', { ms: 5000 }, { signal: AbortSignal.timeout(300) }),
    { code: 'cancelled' },
  );
});

test('500 concurrent calls', async (t) => {
  const pool = await poolWithServer(t);
  await pool.addServer(testServerInput('u'));
  const calls = [];
  for (let i = 0; i < 500; i++) {
    const server = i % 2 ? 't' : 'u';
    calls.push(pool.callTool(`mcp__${server}__add`, { a: i, b: 1 }));
  }
  const results = await Promise.all(calls);
  results.forEach((r, i) => assert.equal(text(r), String(i + 1)));
  assert.equal(pool.inFlight, 0);
});

test('many calls in flight settle with their own results and errors', async (t) => {
  // Results come back to JS in batches (one wake-up of the JS thread settles every call that
  // finished meanwhile): each promise must still get its own result or error.
  const pool = await poolWithServer(t);
  await pool.addServer(testServerInput('u'));
  const calls = [];
  for (let i = 0; i < 2000; i++) {
    const server = i % 2 ? 't' : 'u';
    if (i % 7 === 3) calls.push(pool.callTool(`mcp__${server}__nope`, {}).catch((err) => err));
    else if (i % 11 === 5) calls.push(pool.callTool(`mcp__${server}__fail`, {}));
    else calls.push(pool.callTool(`mcp__${server}__echo`, { text: `call ${i} ✓` }));
  }
  const results = await Promise.all(calls);
  results.forEach((r, i) => {
    if (i % 7 === 3) {
      assert.ok(r instanceof NotFoundError, `${i}: ${r}`);
      assert.equal(r.code, 'not_found');
    } else if (i % 11 === 5) {
      assert.equal(r.isError, true, `${i}`);
    } else {
      assert.deepEqual(r.content, [{ type: 'text', text: `call ${i} ✓` }], `${i}`);
    }
  });
  assert.equal(pool.inFlight, 0);
  // Sequential calls after a burst still complete (the completion queue is not stuck).
  for (let i = 0; i < 50; i++) {
    assert.equal(text(await pool.callTool('mcp__t__add', { a: i, b: 1 })), String(i + 1));
  }
});

test('aborting one call in flight cancels it alone', async (t) => {
  const pool = await poolWithServer(t);
  const controller = new AbortController();
  const slow = pool.callTool('mcp__t__sleep', { ms: 10_000 }, { signal: controller.signal });
  const others = [];
  for (let i = 0; i < 100; i++) others.push(pool.callTool('mcp__t__add', { a: i, b: 2 }));
  const reason = new Error('stop');
  setTimeout(() => controller.abort(reason), 100);
  const started = Date.now();
  await assert.rejects(slow, (err) => {
    assert.ok(err instanceof CancelledError, String(err));
    assert.equal(err.cause, reason);
    return true;
  });
  assert.ok(Date.now() - started < 5_000);
  (await Promise.all(others)).forEach((r, i) => assert.equal(text(r), String(i + 2)));
  assert.equal(pool.inFlight, 0);
});

// The pipes (as /proc names them) that an epoll instance of this process watches
// level-triggered: libuv's way (tokio's reactor registers edge-triggered, with the flag
// EPOLLET; the runtime takes its own registration out while it leaves a pipe to the loop).
// Node's own stdio pipes are among them too, so a test asks about one server's stdout.
function pipesWatchedByLibuv() {
  const seen = new Set();
  const target = (fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return '';
    }
  };
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    if (target(fd) !== 'anon_inode:[eventpoll]') continue;
    let info;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue;
    }
    for (const [, watched, events] of info.matchAll(/^tfd:\s+(\d+)\s+events:\s*([0-9a-f]+)/gm)) {
      const name = target(watched);
      const edge = (Number.parseInt(events, 16) & 0x80000000) !== 0;
      if (name.startsWith('pipe:') && !edge) seen.add(name);
    }
  }
  return seen;
}

// The test server's stdout (a pipe, as /proc names it), through its `pid` tool. The loop
// watches a server's stdout once a call written from its thread went there: the first call
// of a fresh pool may be written by the runtime when the connection comes up, so a second
// call follows.
async function serverStdout(pool) {
  const pid = text(await pool.callTool('mcp__t__pid', {}));
  assert.equal(text(await pool.callTool('mcp__t__echo', { text: 'x' })), 'x');
  return fs.readlinkSync(`/proc/${pid}/fd/1`);
}

test("the event loop reads a stdio server's replies itself", { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  // A reply read on the JS thread settles its call without the runtime thread waking it: the
  // loop watches the server's stdout once it has written a call there.
  const pool = await poolWithServer(t);
  const first = await serverStdout(pool);
  assert.ok(pipesWatchedByLibuv().has(first), first);

  const sums = await Promise.all(
    Array.from({ length: 300 }, (_, i) => pool.callTool('mcp__t__add', { a: i, b: 1 })),
  );
  assert.deepEqual(sums.map(text), Array.from({ length: 300 }, (_, i) => String(i + 1)));
  // Everything else the server says still reaches the pool (rmcp's side of the pipe).
  assert.ok((await pool.listTools()).some((tool) => tool.name === 'echo'));
  for (let i = 0; i < 20; i++) {
    assert.equal(text(await pool.callTool('mcp__t__echo', { text: `s${i}` })), `s${i}`);
  }
  assert.ok(pipesWatchedByLibuv().has(first), first);

  // A new connection's pipe is watched in its place; the old one is given up at its end.
  await pool.disconnect('t');
  for (let i = 0; i < 200 && pipesWatchedByLibuv().has(first); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(!pipesWatchedByLibuv().has(first), first);
  const second = await serverStdout(pool);
  assert.notEqual(second, first);
  assert.ok(pipesWatchedByLibuv().has(second), second);
});

test('a burst of notifications during a call all arrive', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  // 5,000 progress notifications back to back before the reply, read by the loop: each
  // reaches onProgress in order, and the loop still watches the pipe after. (Should the
  // session fall behind, the loop stops reading and the runtime reads at the session's pace;
  // the core's tests force that case.)
  const pool = await poolWithServer(t);
  const stdout = await serverStdout(pool);
  assert.ok(pipesWatchedByLibuv().has(stdout), stdout);
  const heard = [];
  const result = await pool.callTool('mcp__t__sleep', { ms: 0, burst: 5000 }, { onProgress: (p) => heard.push(p.progress) });
  assert.equal(text(result), 'slept');
  for (let i = 0; i < 500 && heard.length < 5000; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual(heard, Array.from({ length: 5000 }, (_, i) => i + 1));
  assert.equal(text(await pool.callTool('mcp__t__echo', { text: 'b' })), 'b');
  assert.ok(pipesWatchedByLibuv().has(stdout), stdout);
});

test('resources: list, templates, read, subscribe errors', async (t) => {
  const pool = await poolWithServer(t);
  const resources = await pool.listResources();
  const hello = resources.find((r) => r.uri === 'test://hello');
  assert.ok(hello, JSON.stringify(resources));
  assert.equal(hello.serverName, 't');
  assert.equal(hello.mimeType, 'text/plain');
  const templates = await pool.listResourceTemplates('t');
  assert.deepEqual(templates.map((x) => x.uriTemplate), ['test://echo/{text}']);

  const read = await pool.readResource('t', 'test://hello');
  assert.equal(read.contents[0].text, 'Hello from mcpmux-test-server');
  const echoed = await pool.readResource('t', 'test://echo/abc');
  assert.equal(echoed.contents[0].text, 'abc');
  await assert.rejects(pool.readResource('t', 'test://missing'), { code: 'protocol' });
  await assert.rejects(pool.readResource('nope', 'test://hello'), { code: 'not_found' });
  // The test server refuses a subscription to test://secret alone; the error names it.
  await assert.rejects(pool.subscribeResource('t', 'test://secret'), { code: 'protocol', message: /test:\/\/secret/ });
  await pool.subscribeResource('t', 'test://hello');
});

test('prompts: list and get', async (t) => {
  const pool = await poolWithServer(t);
  const prompts = await pool.listPrompts();
  const greet = prompts.find((p) => p.name === 'greet');
  assert.equal(greet.serverName, 't');
  assert.ok(greet.arguments.some((a) => a.name === 'name'));
  const got = await pool.getPrompt('t', 'greet', { name: 'Ada' });
  assert.equal(got.messages[0].role, 'user');
  assert.equal(got.messages[0].content.text, 'Hello, Ada!');
  await assert.rejects(pool.getPrompt('t', 'nope'), { code: 'protocol' });
  await assert.rejects(pool.getPrompt('t', 'greet', 'Ada'), { code: 'invalid_argument' });
});

test('searchTools lists servers it does not know, then answers without connecting', async (t) => {
  const first = await poolWithServer(t);
  await first.addServer(testServerInput('idle'));
  // Never listed: the search lists both servers first.
  const hits = await first.searchTools('add two integers', { limit: 3 });
  assert.ok(hits.length >= 2 && hits.length <= 3, JSON.stringify(hits));
  // The same tool of two servers: equal scores, in either order.
  const top = (list) => list.slice(0, 2).map((h) => `${h.serverName}:${h.id}`).sort();
  assert.deepEqual(top(hits), ['idle:mcp__idle__add', 't:mcp__t__add']);
  assert.ok(hits.every((h, i) => i === 0 || h.score <= hits[i - 1].score));
  await first.close();

  // A second pool on the same config answers from the catalog: it starts nothing.
  const pool = await Pool.open({ ...testOptions(t), configPath: first.configPath });
  t.after(() => pool.close());
  const again = await pool.searchTools('add two integers', { limit: 3 });
  assert.deepEqual(top(again), ['idle:mcp__idle__add', 't:mcp__t__add']);
  assert.ok(pool.serverStates().every((s) => s.state === 'disconnected'), JSON.stringify(pool.serverStates()));

  assert.deepEqual(await pool.searchTools('zzzzqqq'), []);
  // Core owns what a limit means: left out it is 10, and 0 is refused, as in every language.
  for (const limit of [0, -1]) {
    await assert.rejects(pool.searchTools('x', { limit }), { code: 'invalid_argument', message: /limit must be at least 1/ });
  }
  await assert.rejects(pool.searchTools('x', { limit: 1.5 }), { code: 'invalid_argument' });
  assert.throws(() => pool.searchRecipes('x', { limit: 0 }), { code: 'invalid_argument', message: /limit must be at least 1/ });
  await assert.rejects(pool.searchTools(7), { code: 'invalid_argument' });
});
