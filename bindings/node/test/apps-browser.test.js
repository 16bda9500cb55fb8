'use strict';
// An MCP App rendered for real: headless Chromium (Debian's package) loads a host page that uses
// the Electron example's renderer (examples/electron-mcp-apps/renderer/host.js) and its sandbox
// proxy, served from a second origin, with Electron's IPC carried over HTTP to the example's
// main-process handlers (mcp-apps.js) on a real pool. The view is the MCP App server from npm
// (server-basic-vanillajs): it must show the result of the call the host made, and its own
// button's call must reach the server through the bridge. A hostile view (the test server's
// `--hostile-view`) tries every road out of its frame: only the origin it declared is reached.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { Pool } = require('mcpmux');

const { repoRoot, tempDir, testOptions, testServerInput } = require('./helpers');

const example = path.join(repoRoot, 'examples', 'electron-mcp-apps');
const appServer = path.join(
  process.env.MCPMUX_DEPS_DIR ? path.resolve(repoRoot, process.env.MCPMUX_DEPS_DIR) : path.join(repoRoot, '.deps'),
  'npm-apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js',
);

function chromium() {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const file = path.join(dir, 'chromium');
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

/**
 * An HTTP server on a free loopback port answering with `route(req, body)` (status, type,
 * body and, optionally, more headers); its origin.
 */
async function serve(t, route) {
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const [status, type, body, headers = {}] = await route(req, Buffer.concat(chunks).toString('utf8'));
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return `http://127.0.0.1:${server.address().port}`;
}

/** Runs Chromium on `url` until its scripts settle; the DOM it ends with. */
function dumpDom(browser, url) {
  return new Promise((resolve, reject) => {
    const child = spawn(browser, [
      '--headless',
      '--no-sandbox', // CI runs as root, where Chromium's own sandbox cannot start
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${tempDir('mcpmux-chromium-')}`,
      '--virtual-time-budget=30000',
      '--dump-dom',
      url,
    ]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`chromium exited with ${code}: ${err.slice(-2000)}`));
    });
  });
}

/** Skips (or fails, where servers are required) without `what`. */
function need(t, what, have) {
  if (have) return true;
  if (process.env.MCPMUX_REQUIRE_SERVERS === '1') assert.fail(`${what} is not installed`);
  t.skip(`${what} is not installed`);
  return false;
}

/**
 * The Electron example's host on a real pool, as web pages: the host page (the renderer's
 * host.js, with Electron's IPC carried over HTTP to the example's main-process handlers) and
 * the sandbox proxy on a second origin, served as the example's main process serves it.
 * `hook` adds the test's script to the proxy. Answers the URL showing `toolId`'s view and what
 * each IPC channel answered.
 */
async function electronHost(t, pool, toolId, { hook } = {}) {
  // Electron's ipcMain, as far as the example uses it, with what each channel answered.
  const handlers = new Map();
  const answered = [];
  const ipcMain = { handle: (channel, fn) => handlers.set(channel, fn) };
  const apps = require(path.join(example, 'mcp-apps.js')).registerMcpApps(ipcMain, pool);

  const sandbox = await serve(t, async (req) => {
    if (req.url.startsWith('/sandbox.html')) {
      const page = apps.sandboxPage(new URL(req.url, 'http://sandbox'));
      const html = hook ? page.html.replace('</body>', '<script src="/hook.js"></script></body>') : page.html;
      return [page.status, 'text/html', html, page.headers];
    }
    if (req.url === '/hook.js' && hook) {
      return [200, 'text/javascript', fs.readFileSync(hook)];
    }
    return [404, 'text/plain', 'not found'];
  });
  const host = await serve(t, async (req, body) => {
    if (req.url.startsWith('/host.html')) {
      // As the example's renderer/index.html: frames come from the sandbox's origin alone.
      const policy = { 'content-security-policy': `frame-src ${sandbox}` };
      return [200, 'text/html', fs.readFileSync(path.join(__dirname, 'fixtures', 'apps-host.html')), policy];
    }
    if (req.url === '/host.js') {
      return [200, 'text/javascript', fs.readFileSync(path.join(example, 'renderer', 'host.js'))];
    }
    if (req.url === '/ipc' && req.method === 'POST') {
      const [channel, ...args] = JSON.parse(body);
      try {
        const value = await handlers.get(channel)({}, ...args);
        answered.push({ channel, args, value });
        return [200, 'application/json', JSON.stringify({ value: value ?? null })];
      } catch (err) {
        return [200, 'application/json', JSON.stringify({ error: err.message })];
      }
    }
    return [404, 'text/plain', 'not found'];
  });
  assert.notEqual(new URL(host).origin, new URL(sandbox).origin);
  const url = `${host}/host.html?tool=${encodeURIComponent(toolId)}&sandbox=${encodeURIComponent(`${sandbox}/sandbox.html`)}`;
  return { url, answered };
}

test('a real MCP App renders in Chromium, gets its result and calls back through the bridge', async (t) => {
  const browser = chromium();
  if (!need(t, 'chromium', browser) || !need(t, 'server-basic-vanillajs (.deps/npm-apps)', fs.existsSync(appServer))) {
    return;
  }
  const pool = await Pool.open(testOptions(t, { apps: {} }));
  t.after(() => pool.close());
  await pool.addServer({ name: 'clock', config: { command: process.execPath, args: [appServer, '--stdio'] } });

  const tool = (await pool.listTools('clock')).find((x) => x.name === 'get-time');
  const { url, answered } = await electronHost(t, pool, tool.id, {
    hook: path.join(__dirname, 'fixtures', 'apps-sandbox-hook.js'),
  });
  const dom = await dumpDom(browser, url);
  const shown = JSON.parse(dom.match(/<pre id="out">([^<]*)<\/pre>/)[1].replace(/&quot;/g, '"'));
  assert.equal(shown.error, undefined, shown.error);
  // Every post the view was due, in the order the host got them.
  const posts = answered.flatMap((a) =>
    a.channel === 'mcp-apps:result' ? a.value : a.channel === 'mcp-apps:message' ? a.value.post : [],
  );
  const fromHost = posts.find((m) => m.method === 'ui/notifications/tool-result');
  assert.ok(fromHost, `no tool result reached the view: ${JSON.stringify(posts).slice(0, 500)}`);
  assert.equal(shown.first, fromHost.params.structuredContent.time, 'the view shows the host call\'s result');

  // The view's own call went through the bridge (app_call) and its answer is what it shows.
  const viewCall = answered.find((a) => a.channel === 'mcp-apps:message' && a.args[1]?.method === 'tools/call');
  assert.ok(viewCall, 'the view made no tools/call');
  assert.equal(viewCall.args[1].params.name, 'get-time');
  const reply = viewCall.value.post.find((m) => m.id === viewCall.args[1].id);
  assert.equal(shown.second, reply.result.structuredContent.time);
  assert.notEqual(shown.second, shown.first);
  const methods = answered.filter((a) => a.channel === 'mcp-apps:message').map((a) => a.args[1].method);
  assert.ok(methods.includes('ui/initialize') && methods.includes('ui/notifications/initialized'), methods.join());
});


test('a hostile view reaches the origin it declared and nothing else: no other origin, no host', async (t) => {
  const browser = chromium();
  if (!need(t, 'chromium', browser)) return;
  // The origin the view declares, and another: each remembers what asked for it.
  const asked = { declared: [], other: [] };
  const declared = await serve(t, async (req) => {
    asked.declared.push(req.url);
    return [200, 'text/plain', 'ok', { 'access-control-allow-origin': '*' }];
  });
  const other = await serve(t, async (req) => {
    asked.other.push(req.url);
    return [200, 'text/html', '<p>got out</p>', { 'access-control-allow-origin': '*' }];
  });
  const pool = await Pool.open(testOptions(t, { apps: {} }));
  t.after(() => pool.close());
  await pool.addServer(testServerInput('hostile', ['--hostile-view', `${declared},${other}`]));
  const tool = (await pool.listTools('hostile')).find((x) => x.name === 'escape');
  const { url } = await electronHost(t, pool, tool.id);

  const dom = await dumpDom(browser, url);
  const done = asked.declared.find((u) => u.startsWith('/escape/done'));
  assert.ok(done, `the view never finished trying (it asked the declared origin for ${asked.declared})`);
  const tried = JSON.parse(new URL(done, declared).searchParams.get('tried'));
  // The view ran, and reached what it declared: the rest is not for want of trying.
  assert.equal(tried.declared, 'ran', JSON.stringify(tried));
  assert.ok(asked.declared.includes('/escape/declared'));
  assert.deepEqual(asked.other, [], `the view got out by ${asked.other.join(', ')}; it saw ${JSON.stringify(tried)}`);
  // The host page is still the host's, untouched.
  assert.match(dom, /<pre id="out">/);
  assert.doesNotMatch(dom, /escaped|got out/);
});
