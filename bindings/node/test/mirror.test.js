'use strict';
// index.d.ts and the error classes mirror core's types: the record interfaces' members are
// generated from core's JSON Schemas (tests/tests/integration/mirrors fails CI when they
// drift), the events and error classes are written by hand. Each must have every field, event
// and code core has (native `mirrored()`): a test here fails when core gains one the package
// lacks.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const mcpmux = require('mcpmux');
const { nativeAddon, packageDir } = require('./helpers');

const MIRRORED = JSON.parse(nativeAddon().mirrored());

/** Every `export interface` of index.d.ts: its property names, and its `type` literal if any. */
function interfaces() {
  const file = path.join(packageDir, 'index.d.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out = new Map();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    const props = new Set();
    let tag;
    for (const m of node.members) {
      if (!ts.isPropertySignature(m) || !m.name) continue;
      const name = m.name.getText(source).replace(/^['"]|['"]$/g, '');
      props.add(name);
      if (name === 'type' && m.type && ts.isLiteralTypeNode(m.type)) tag = m.type.literal.text;
    }
    out.set(node.name.text, { props, tag });
  });
  return { out, source };
}

test('each record type of index.d.ts has every field of core', () => {
  const { out } = interfaces();
  for (const [name, fields] of Object.entries(MIRRORED.types)) {
    const mine = out.get(name);
    assert.ok(mine, `index.d.ts has no interface ${name}`);
    const missing = fields.filter((f) => !mine.props.has(f));
    assert.deepEqual(missing, [], `${name} in index.d.ts lacks ${missing.join(', ')}`);
  }
});

test('each event of core has its interface in index.d.ts, with every field', () => {
  const { out } = interfaces();
  const byTag = new Map([...out.values()].filter((i) => i.tag).map((i) => [i.tag, i]));
  for (const [name, fields] of Object.entries(MIRRORED.events)) {
    const mine = byTag.get(name);
    assert.ok(mine, `index.d.ts has no event interface with type '${name}'`);
    const missing = fields.filter((f) => !mine.props.has(f));
    assert.deepEqual(missing, [], `the '${name}' event in index.d.ts lacks ${missing.join(', ')}`);
  }
  assert.deepEqual([...mcpmux.EVENT_NAMES].sort(), Object.keys(MIRRORED.events).sort());
});

test('each error code of core has its class and is in the ErrorCode type', () => {
  const { source } = interfaces();
  let codes = [];
  source.forEachChild((node) => {
    if (ts.isTypeAliasDeclaration(node) && node.name.text === 'ErrorCode') {
      codes = node.type.types.map((t) => t.literal.text);
    }
  });
  assert.deepEqual([...codes].sort(), [...MIRRORED.errorCodes].sort(), 'the ErrorCode type of index.d.ts');
  const classes = Object.values(mcpmux).filter((v) => typeof v === 'function' && typeof v.code === 'string');
  assert.deepEqual(classes.map((c) => c.code).sort(), [...MIRRORED.errorCodes].sort(), 'the exported error classes');
});

test('the provider kinds of core are the ProviderConfig union of index.d.ts and what Agent takes', () => {
  const file = path.join(packageDir, 'index.d.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  let kinds = [];
  source.forEachChild((node) => {
    if (ts.isTypeAliasDeclaration(node) && node.name.text === 'ProviderConfig') {
      kinds = node.type.types.map((member) => {
        const tag = member.members.find((m) => m.name.getText(source) === 'type');
        return tag.type.literal.text;
      });
    }
  });
  assert.deepEqual([...kinds].sort(), [...MIRRORED.providerTypes].sort(), 'the ProviderConfig type of index.d.ts');
  const { PROVIDER_TYPES } = require(path.join(packageDir, 'lib', 'agent.js'));
  assert.deepEqual([...PROVIDER_TYPES].sort(), [...MIRRORED.providerTypes].sort(), 'lib/agent.js');
});
