'use strict';
// What Electron needs of the addon, checked without Electron (its npm package downloads its
// binary at install, which CI cannot): the Node-API version the package declares is the one
// the crate builds against, and every Node and Electron version the README names provides it
// (node-api-version, what @electron/rebuild consults); and the addon never creates external
// buffers, which Electron's V8 memory cage refuses.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { fromNodeVersion, fromElectronVersion } = require('node-api-version');

const { packageDir, repoRoot } = require('./helpers');

const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const crateDir = path.join(repoRoot, 'bindings', 'node');

/** The Node-API version the package declares (`binary.napi_versions`, read by prebuild tools). */
function declaredNapi() {
  const versions = pkg.binary?.napi_versions;
  assert.ok(Array.isArray(versions) && versions.length > 0, 'package.json lacks binary.napi_versions');
  return Math.max(...versions);
}

/** `[["Node", "18"], ["Node", "20"], ["Electron", "15"], ...]`: every version the README names,
 * "Node 18, 20 and 22" and "Electron ≥ 15" alike. */
function versionsInReadme() {
  const readme = fs.readFileSync(path.join(packageDir, 'README.md'), 'utf8');
  const named = [];
  const list = /,\s+|\s+and\s+|\s+or\s+/;
  for (const m of readme.matchAll(new RegExp(`\\b(Node|Electron)\\s+(?:≥\\s*)?(\\d+(?:(?:${list.source})\\d+)*)`, 'g'))) {
    for (const v of m[2].split(list)) named.push([m[1], v]);
  }
  return named;
}

test('the declared Node-API version is the one the crate is built with', () => {
  const cargo = fs.readFileSync(path.join(crateDir, 'Cargo.toml'), 'utf8');
  const napiLine = cargo.split('\n').find((l) => /^napi\s*=/.test(l));
  assert.ok(napiLine, 'no napi dependency in Cargo.toml');
  const features = [...napiLine.matchAll(/"napi(\d+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(features, [declaredNapi()], napiLine);
  assert.ok(Number(process.versions.napi) >= declaredNapi(), `this Node has Node-API ${process.versions.napi}`);
});

test('every Node and Electron version the README names provides that Node-API version', () => {
  const named = versionsInReadme();
  const want = declaredNapi();
  for (const major of ['18', '20', '22']) {
    assert.ok(named.some(([what, v]) => what === 'Node' && v === major), `the README names no Node ${major}`);
  }
  assert.ok(named.some(([what]) => what === 'Electron'), 'the README names no Electron version');
  for (const [what, v] of named) {
    const napi = what === 'Node' ? fromNodeVersion(`${v}.0.0`) : fromElectronVersion(`${v}.0.0`);
    assert.ok(napi >= want, `${what} ${v} has Node-API ${napi}, the addon needs ${want}`);
  }
  // The checker itself tells old from new (an Electron that predates Node-API 8 fails).
  assert.ok(fromElectronVersion('12.0.0') < want);
});

// napi-rs types whose values can wrap memory V8 does not own (a Vec handed over as an external
// buffer), and the raw calls that make one. Electron's memory cage makes those calls fail
// (napi_no_external_buffers_allowed); only strings and plain values cross into JS here.
const EXTERNAL_MEMORY = /\b(?:Buffer|BufferSlice|JsBuffer|ArrayBuffer|ArrayBufferSlice|JsArrayBuffer|TypedArray|JsTypedArray|Uint8Array|Uint8ArraySlice|Uint8ClampedArray|Int8Array|Int16Array|Uint16Array|Int32Array|Uint32Array|Float32Array|Float64Array|BigInt64Array|BigUint64Array)\b|from_external|create_external|napi_create_external_(?:array)?buffer/;

test('the addon creates no external buffers or ArrayBuffers, which Electron refuses', () => {
  const srcDir = path.join(crateDir, 'src');
  const files = fs.readdirSync(srcDir).filter((f) => f.endsWith('.rs'));
  assert.ok(files.includes('lib.rs'), `no sources in ${srcDir}`);
  const found = [];
  for (const f of files) {
    fs.readFileSync(path.join(srcDir, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, '');
        if (EXTERNAL_MEMORY.test(code)) found.push(`src/${f}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, []);
  // The scan finds what it looks for.
  for (const line of ['let b = Buffer::from(vec![1u8]);', 'ArrayBuffer::from_external(env, ptr, len)', 'Uint8Array::new(v)']) {
    assert.ok(EXTERNAL_MEMORY.test(line), line);
  }
});
