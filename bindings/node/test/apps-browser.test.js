'use strict';
// An MCP App rendered for real: headless Chromium (Debian's package) loads a host page that uses
// the Electron example's renderer (examples/electron-mcp-apps/renderer/host.js) and its sandbox
// proxy, served from a second origin, with Electron's IPC carried over HTTP to the example's
// main-process handlers (mcp-apps.js) on a real pool. The view is the MCP App server from npm
// (server-basic-vanillajs): it must show the result of the call the host made, and its own
// button's call must reach the server through the bridge.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { Pool } = require('mcpmux');

const { repoRoot, tempDir, testOptions } = require('./helpers');

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

/** An HTTP server on a free loopback port answering with `route(req, body)`; its origin. */
async function serve(t, route) {
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const [status, type, body] = await route(req, Buffer.concat(chunks).toString('utf8'));
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
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

test('a real MCP App renders in Chromium, gets its result and calls back through the bridge', async (t) => {
  const browser = chromium();
  if (!browser || !fs.existsSync(appServer)) {
    const missing = !browser ? 'chromium' : 'server-basic-vanillajs (.deps/npm-apps)';
    if (process.env.MCPMUX_REQUIRE_SERVERS === '1') assert.fail(`${missing} is not installed`);
    t.skip(`${missing} is not installed`);
    return;
  }
  const pool = await Pool.open(testOptions(t, { apps: {} }));
  t.after(() => pool.close());
  await pool.addServer({ name: 'clock', config: { command: process.execPath, args: [appServer, '--stdio'] } });

  // Electron's ipcMain, as far as the example uses it, with what each channel answered.
  const handlers = new Map();
  const answered = [];
  const ipcMain = { handle: (channel, fn) => handlers.set(channel, fn) };
  require(path.join(example, 'mcp-apps.js')).registerMcpApps(ipcMain, pool);

  const sandbox = await serve(t, async (req) => {
    if (req.url === '/sandbox.html') {
      const page = fs.readFileSync(path.join(example, 'renderer', 'sandbox.html'), 'utf8');
      return [200, 'text/html', page.replace('</body>', '<script src="/hook.js"></script></body>')];
    }
    if (req.url === '/hook.js') {
      return [200, 'text/javascript', fs.readFileSync(path.join(__dirname, 'fixtures', 'apps-sandbox-hook.js'))];
    }
    return [404, 'text/plain', 'not found'];
  });
  const host = await serve(t, async (req, body) => {
    if (req.url.startsWith('/host.html')) {
      return [200, 'text/html', fs.readFileSync(path.join(__dirname, 'fixtures', 'apps-host.html'))];
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

  const tool = (await pool.listTools('clock')).find((x) => x.name === 'get-time');
  const url = `${host}/host.html?tool=${encodeURIComponent(tool.id)}&sandbox=${encodeURIComponent(`${sandbox}/sandbox.html`)}`;
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
