'use strict';
// Process lifetime: an mcpmux pool must never keep Node running unless asked to, and the addon
// must survive environments being torn down and re-created (worker_threads, as in Electron).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const { runNode } = require('./helpers');

const exitScript = path.join(__dirname, 'fixtures', 'exit-after-close.js');

test('the process exits by itself after close()', async () => {
  const r = await runNode([exitScript, 'close']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /result hi\n[\s\S]*closed/);
  assert.ok(r.ms < 10_000, `${r.ms} ms`);
});

test('an open, idle pool does not keep the process alive', async () => {
  const r = await runNode([exitScript, 'open']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /left open/);
});

test('a call in flight keeps the process alive until it settles', async () => {
  const r = await runNode([exitScript, 'awaiting']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /slept ok/);
});

test('ref() keeps the process alive until unref()', async () => {
  const r = await runNode([exitScript, 'ref']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  // The unref'ed 1.5 s timer only fires because ref() held the event loop open.
  assert.match(r.stdout, /ref\nunref/);
  assert.ok(r.ms >= 1500, `${r.ms} ms`);
});

test('process.exit() with a call in flight does not crash', async () => {
  const r = await runNode([exitScript, 'exit-busy']);
  assert.equal(r.timedOut, false);
  assert.equal(r.signal, null, r.stderr);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /exiting/);
});

test('loading the addon in worker_threads and the main thread, repeatedly', async () => {
  const r = await runNode([path.join(__dirname, 'fixtures', 'workers.js')], { timeoutMs: 60_000 });
  assert.equal(r.signal, null, `crashed: ${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'round 1\nround 2\nround 3\ndone\n');
});

const hostExitScript = path.join(__dirname, 'fixtures', 'host-exit.js');

test('JS callbacks (host tools, handlers, a JS provider) never keep the process alive', async () => {
  const r = await runNode([hostExitScript, 'open']);
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'hello js answer\nleft open\n');
});

test('process.exit() while the core waits on JS promises does not crash', async () => {
  const r = await runNode([hostExitScript, 'exit-busy']);
  assert.equal(r.timedOut, false);
  assert.equal(r.signal, null, r.stderr);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /exiting/);
});

test('terminating a worker while the core waits on its JS callbacks does not crash', async () => {
  const r = await runNode([hostExitScript, 'worker'], { timeoutMs: 60_000 });
  assert.equal(r.timedOut, false, `still running: ${r.stdout}${r.stderr}`);
  assert.equal(r.signal, null, `crashed: ${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /done\n$/);
});
