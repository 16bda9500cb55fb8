'use strict';
// Shared by the tests: locating the real MCP servers, temporary config files, free ports.
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

/** The package under test, as the tests' own `require('mcpmux')` finds it: the tarballs
 * installed in an app (scripts/test-node.sh), or bindings/node itself through its package.json
 * "exports" (self-reference) when the tests run in the source tree. */
const packageDir = path.dirname(require.resolve('mcpmux/package.json'));
/** The repository (test servers, contract tables, sources). The installed tests are copied out
 * of it, so scripts/test-node.sh says where it is. */
const repoRoot = process.env.MCPMUX_REPO_ROOT
  ? path.resolve(process.env.MCPMUX_REPO_ROOT)
  : path.resolve(__dirname, '..', '..', '..');
/** Whether the package under test is an installed copy (in node_modules), not the source tree. */
const installed = packageDir.split(path.sep).includes('node_modules');

/** napi's loader of the package under test, for the tests of the addon's own functions. */
function nativeAddon() {
  return require(path.join(packageDir, 'native.js'));
}

/** The `mcpmux-test-server` binary; built by scripts/test-node.sh. */
const testServer =
  process.env.MCPMUX_TEST_SERVER || path.join(repoRoot, 'target', 'debug', 'mcpmux-test-server');

/** The scripted model service (`mcpmux-fake-llm`); built by scripts/test-node.sh. */
const fakeLlm =
  process.env.MCPMUX_FAKE_LLM || path.join(repoRoot, 'target', 'debug', 'mcpmux-fake-llm');

/** server-everything's entry point, installed by scripts/test-deps.sh. */
const everything = path.join(
  process.env.MCPMUX_DEPS_DIR ? path.resolve(repoRoot, process.env.MCPMUX_DEPS_DIR) : path.join(repoRoot, '.deps'),
  'npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

/** FastMCP with fastmcp-tasks (tools that run as tasks), in its venv from scripts/test-deps.sh. */
const tasksServer = [
  path.join(
    process.env.MCPMUX_DEPS_DIR ? path.resolve(repoRoot, process.env.MCPMUX_DEPS_DIR) : path.join(repoRoot, '.deps'),
    'tasks-venv/bin/python',
  ),
  path.join(repoRoot, 'tests/servers/fastmcp_tasks_server.py'),
];

/** FastMCP's skills provider (the same venv); append the folder of skills it serves. */
const skillsServer = [tasksServer[0], path.join(repoRoot, 'tests/servers/fastmcp_skills_server.py')];

for (const [what, file] of [
  ['mcpmux-test-server', testServer],
  ['mcpmux-fake-llm', fakeLlm],
  ['server-everything', everything],
  ['FastMCP with fastmcp-tasks', tasksServer[0]],
]) {
  if (!fs.existsSync(file)) {
    throw new Error(`${what} not found at ${file}: run scripts/test-node.sh (it builds and installs it)`);
  }
}

const tempDirs = [];
// Removed when the test file's process exits, not per test: a test's own `t.after` hooks
// (closing its pool) may run after a per-test cleanup, while the pool still writes its tool
// catalog there.
process.on('exit', () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** A fresh folder, removed when the process exits. */
function tempDir(prefix = 'mcpmux-node-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A fresh folder for one test's config file (`t` is unused, kept for call-site clarity). */
function tempConfig(_t) {
  return path.join(tempDir(), 'mcpmux.json');
}

/** Pool options for tests: a temp config, no background connects or health checks. */
function testOptions(t, extra = {}) {
  return {
    configPath: tempConfig(t),
    connectOnAdd: false,
    healthCheckIntervalMs: 0,
    shutdownTimeoutMs: 2000,
    ...extra,
  };
}

function testServerInput(name, args = []) {
  return { name, config: { command: testServer, args } };
}

function everythingStdioInput(name = 'everything') {
  return { name, config: { command: process.execPath, args: [everything, 'stdio'] } };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listened on port ${port} within ${ms} ms`);
}

/** Starts server-everything over Streamable HTTP on a free port; stopped by `t.after`. */
async function startEverythingHttp(t) {
  const port = await freePort();
  // server-everything's HTTP mode needs Node 19's global `crypto`; it is the server here, not
  // what is tested, so on Node 18 scripts/test-node.sh names a newer Node for it.
  const child = spawn(process.env.MCPMUX_SERVER_NODE || process.execPath, [everything, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  t.after(() => child.kill('SIGTERM'));
  // It listens in about a second, but a busy CI machine once took over 20 s to start it.
  await waitForPort(port, 60_000);
  return `http://127.0.0.1:${port}/mcp`;
}

/**
 * Starts the scripted model service (OpenAI's streaming wire format on 127.0.0.1, the same
 * program the C and Python tests use) with `turns`; resolves with its base URL. `t.after`
 * stops it (it serves until its stdin ends).
 */
function startFakeLlm(t, turns) {
  const child = spawn(fakeLlm, [JSON.stringify(turns)], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => child.stdin.end());
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('error', reject);
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n');
      if (line.length > 1) resolve(line[0].trim());
    });
  });
}

/** Resolves with the next `name` event of `emitter` that satisfies `pred`, or rejects after `ms`. */
function waitEvent(emitter, name, pred = () => true, ms = 10_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(name, on);
      reject(new Error(`no '${name}' event within ${ms} ms`));
    }, ms);
    function on(e) {
      if (!pred(e)) return;
      clearTimeout(timer);
      emitter.off(name, on);
      resolve(e);
    }
    emitter.on(name, on);
  });
}

/** Runs a node script in a child process; resolves with its exit code, signal, output, time. */
function runNode(args, { timeoutMs = 30_000, env = {} } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

module.exports = {
  packageDir,
  repoRoot,
  installed,
  nativeAddon,
  testServer,
  everything,
  tasksServer,
  skillsServer,
  tempDir,
  tempConfig,
  testOptions,
  testServerInput,
  everythingStdioInput,
  startEverythingHttp,
  startFakeLlm,
  waitEvent,
  runNode,
  text,
};
