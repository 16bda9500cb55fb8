'use strict';
// A sandboxed stdio server, from Node: the tests' hostile probe server reads the user's key
// and writes outside its folder without a sandbox, and cannot in one.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Pool } = require('mcpmux');
const { testOptions, testServer } = require('./helpers');

const probe = path.join(path.dirname(testServer), 'mcpmux-probe-server');

function home(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpmux-sandbox-home-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, '.ssh'));
  fs.writeFileSync(path.join(dir, '.ssh/id_rsa'), '-----BEGIN FAKE KEY-----');
  fs.mkdirSync(path.join(dir, 'project/out'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'project/notes.md'), '# notes');
  return dir;
}

test('a sandboxed server gets what it is granted and nothing else', async (t) => {
  const dir = home(t);
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  /** @type {import('mcpmux').Sandbox} */
  const sandbox = { read: [path.join(dir, 'project')], write: [path.join(dir, 'project/out')] };
  const record = await pool.addServer({ name: 'jailed', config: { command: probe, sandbox } });
  assert.deepEqual(record.config.sandbox, sandbox);
  await pool.addServer({ name: 'free', config: { command: probe } });
  const probeAs = (server, attempt) => pool.callTool(`mcp__${server}__probe`, attempt);
  const key = path.join(dir, '.ssh/id_rsa');
  for (const attempt of [{ read: key }, { write: path.join(dir, 'planted.sh') }]) {
    assert.ok(!(await probeAs('free', attempt)).isError, JSON.stringify(attempt));
    const denied = await probeAs('jailed', attempt);
    assert.ok(denied.isError, JSON.stringify(denied));
    assert.match(denied.content[0].text, /Permission denied/);
  }
  const notes = await probeAs('jailed', { read: path.join(dir, 'project/notes.md') });
  assert.equal(notes.content[0].text, 'ok: read 7 bytes');
  const written = await probeAs('jailed', { write: path.join(dir, 'project/out/report.md') });
  assert.ok(!written.isError, JSON.stringify(written));
});

test('a sandbox for a remote server is refused with what to change', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  const remote = { name: 'remote', config: { url: 'http://127.0.0.1:9/mcp', sandbox: {} } };
  await assert.rejects(pool.addServer(remote), {
    code: 'invalid_argument',
    message: /only a stdio server/,
  });
  const typo = { name: 'typo', config: { command: 'x', sandbox: { raed: ['/'] } } };
  await assert.rejects(pool.addServer(typo), { code: 'invalid_argument', message: /unknown field `raed`/ });
});
