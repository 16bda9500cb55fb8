'use strict';
// Calling the addon: its errors mapped to the package's classes, cancellable calls wired to an
// AbortSignal, and the native pool behind each Pool.

const { CancelledError, InvalidArgumentError, fromNative } = require('./errors');
const { describe } = require('./validate');

/** Awaits a native promise, mapping its error. Also maps a synchronous throw. */
async function call(fn) {
  try {
    return await fn();
  } catch (err) {
    throw fromNative(err);
  }
}

async function callJson(fn) {
  return JSON.parse(await call(fn));
}

/** Runs a synchronous native method, mapping its error. */
function callSync(fn) {
  try {
    return fn();
  } catch (err) {
    throw fromNative(err);
  }
}

/** The native pool of each Pool, for Agent and Conversation. */
const NATIVE = new WeakMap();

/** The native pool of a Pool (only Pools are registered, so anything else is refused). */
function nativeOf(pool) {
  const n = typeof pool === 'object' && pool !== null ? NATIVE.get(pool) : undefined;
  if (!n) throw new InvalidArgumentError(`expected a Pool, not ${describe(pool)}`);
  return n;
}

/** Runs `start(id)`, a native call begun with `beginCall` (its promise may reject with the
 * addon's errors), cancelled through `signal` when that aborts (at once if it already has). A
 * cancellation the signal caused has the signal's reason as its `cause`. */
async function withSignal(nativePool, signal, start) {
  const id = nativePool.beginCall();
  const onAbort = () => nativePool.cancelCall(id);
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await start(id);
  } catch (err) {
    const mapped = fromNative(err);
    if (mapped instanceof CancelledError && signal?.aborted && mapped.cause === undefined) {
      mapped.cause = signal.reason;
    }
    throw mapped;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** `withSignal` for a native call that answers JSON text. */
async function cancellable(nativePool, signal, start) {
  return JSON.parse(await withSignal(nativePool, signal, start));
}

module.exports = { call, callJson, callSync, NATIVE, nativeOf, cancellable, withSignal };
