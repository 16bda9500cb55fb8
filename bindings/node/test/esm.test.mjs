// The ES module entry (index.mjs through "exports" → "import"): named exports and the default
// export are the CommonJS entry's very objects (so `instanceof` works across both), and a
// pool opened through it calls a real server.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import mcpmux, { Pool, NotFoundError, McpmuxError, EVENT_NAMES, version } from 'mcpmux';
import * as esm from 'mcpmux';

const require = createRequire(import.meta.url);
const cjs = require('mcpmux');
const { testOptions, testServerInput, text } = require('./helpers.js');

test('the default export is the CommonJS exports object', () => {
  assert.equal(mcpmux, cjs);
  assert.equal(Pool, cjs.Pool);
  assert.equal(NotFoundError, cjs.NotFoundError);
  assert.equal(EVENT_NAMES, cjs.EVENT_NAMES);
  assert.equal(version, require('mcpmux/package.json').version);
});

test('the named exports are exactly the CommonJS exports, the same objects', () => {
  const named = Object.keys(esm).filter((k) => k !== 'default').sort();
  assert.deepEqual(named, Object.keys(cjs).sort());
  for (const name of named) assert.equal(esm[name], cjs[name], name);
});

test('a tool call through the ES module entry', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  await pool.addServer(testServerInput('t'));
  assert.equal(text(await pool.callTool('mcp__t__echo', { text: 'from import' })), 'from import');
  // Errors are the CommonJS entry's classes too.
  await assert.rejects(pool.callTool('mcp__t__nope', {}), (err) => {
    assert.ok(err instanceof NotFoundError && err instanceof cjs.McpmuxError && err instanceof McpmuxError);
    return true;
  });
});
