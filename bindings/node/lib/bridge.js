'use strict';
// Calling JS from the core: the native side sends `{id, payload}` and waits for
// `hostReply(id, ok, json)`, or sends `{abort: id}` when it stops waiting (see src/bridge.rs).

const native = require('./addon');
const { CancelledError, InvalidArgumentError } = require('./errors');
const { describe, errorMessage, warn } = require('./validate');

/**
 * Wraps `invoke(payload, signal, id)` (sync or async) as a native callback: its value goes back
 * as JSON, whatever it throws (or rejects with) goes back as the error's message.
 */
function bridge(nativePool, invoke) {
  const controllers = new Map();
  return (json) => {
    let msg;
    try {
      msg = JSON.parse(json);
    } catch {
      return;
    }
    if (msg.abort !== undefined) {
      const controller = controllers.get(msg.abort);
      controllers.delete(msg.abort);
      controller?.abort(new CancelledError('cancelled'));
      return;
    }
    const { id, payload } = msg;
    const controller = new AbortController();
    controllers.set(id, controller);
    new Promise((resolve) => resolve(invoke(payload, controller.signal, id)))
      .then((value) => {
        let text;
        try {
          text = JSON.stringify(value === undefined ? null : value) ?? 'null';
        } catch (err) {
          throw new TypeError(`the callback's result cannot be sent as JSON: ${err.message}`, {
            cause: err,
          });
        }
        nativePool.hostReply(id, true, text);
      })
      .catch((err) => {
        try {
          nativePool.hostReply(id, false, errorMessage(err));
        } catch (e) {
          warn(e);
        }
      })
      .finally(() => controllers.delete(id));
  };
}

/** A search's `limit` as the caller gave it (core says what a missing one and 0 mean). */
function optionalLimit(limit) {
  if (limit === undefined || limit === null) return null;
  if (!Number.isSafeInteger(limit)) {
    throw new InvalidArgumentError(`limit must be an integer, not ${describe(limit)}`);
  }
  return limit;
}

/**
 * Asks the approval callback. A throw, or an answer core refuses, is warned about here and goes
 * back as a failure, which core takes as a denial (`host::answers::approval_or_deny`).
 */
function approvalBridge(nativePool, approve) {
  return bridge(nativePool, async (request) => {
    try {
      const answer = await approve(request);
      native.readHostAnswer('approval', JSON.stringify(answer ?? null) ?? 'null');
      return answer ?? null;
    } catch (err) {
      warn(err);
      throw err;
    }
  });
}

module.exports = { bridge, optionalLimit, approvalBridge };
