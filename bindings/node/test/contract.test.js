'use strict';
// The host contract (tests/contract/host_answers.json): each answer a JS callback returns gives
// what the table says, the same as in C and Python. The answer goes through the binding's own
// marshalling (JSON, `undefined` as null) and core's reader; host tools are called for real.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { Pool } = require('mcpmux');
const { nativeAddon, repoRoot, testOptions } = require('./helpers');

const native = nativeAddon();

const TABLE = JSON.parse(fs.readFileSync(path.join(repoRoot, 'tests/contract/host_answers.json'), 'utf8')).cases;

test('each answer gives what the table says', () => {
  assert.ok(TABLE.length >= 30);
  for (const c of TABLE) {
    const text = JSON.stringify(c.answer ?? null);
    const what = `${c.kind}: ${c.about}`;
    if (c.refused !== undefined) {
      assert.throws(() => native.readHostAnswer(c.kind, text), (err) => {
        assert.equal(err.code, c.refused, what);
        assert.ok(err.message.includes(c.says), `${what}: ${err.message}`);
        return true;
      });
    } else {
      assert.deepEqual(JSON.parse(native.readHostAnswer(c.kind, text)), c.accepted, what);
    }
  }
  assert.throws(() => native.readHostAnswer('guess', '1'), { code: 'invalid_argument' });
});

test('host tools answer as the table says', async (t) => {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  const rows = TABLE.filter((c) => c.kind === 'tool_result');
  for (const [n, c] of rows.entries()) {
    const name = `js_contract_${n}`;
    pool.registerTool({ name, handler: () => c.answer });
    const result = await pool.callTool(name, {});
    if (c.refused !== undefined) {
      assert.equal(result.isError, true, c.about);
      assert.ok(result.content[0].text.includes(c.says), `${c.about}: ${result.content[0].text}`);
    } else {
      assert.deepEqual(result, c.accepted, c.about);
    }
  }
  // `undefined` is sent as null (no content); a value JSON cannot hold is an error result.
  pool.registerTool({ name: 'js_undefined', handler: () => undefined });
  assert.deepEqual((await pool.callTool('js_undefined', {})).content, []);
  pool.registerTool({ name: 'js_bigint', handler: () => 1n });
  const bad = await pool.callTool('js_bigint', {});
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /JSON/);
});
