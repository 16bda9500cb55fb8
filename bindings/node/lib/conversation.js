'use strict';
// A conversation: what one agent run may call, over a pool's servers.

const { CancelledError, InvalidArgumentError } = require('./errors');
const { callSync, cancellable, nativeOf } = require('./calls');
const { describe, requireObject, requireSignal, requireString, toJson } = require('./validate');

/** What one agent conversation may call: discovery tools, then the tools of servers used. */
class Conversation {
  #pool;
  #native;

  constructor(pool, options = {}) {
    const nativePool = nativeOf(pool);
    requireObject('options', options);
    const { servers = {} } = options;
    requireObject('servers', servers);
    this.#pool = nativePool;
    this.#native = callSync(() => nativePool.conversation(toJson('servers', servers)));
  }

  /** The function definitions to offer a model now. */
  tools() {
    return JSON.parse(this.#native.tools());
  }

  /** Ids of the servers activated so far. */
  activated() {
    return JSON.parse(this.#native.activated());
  }

  /** Calls a function by the name `tools()` gave: discovery answered locally, a real tool
   * activates its server. */
  async call(name, args, options = {}) {
    requireString('name', name);
    if (args !== undefined && args !== null) requireObject('args', args);
    requireObject('options', options);
    const { signal, timeoutMs } = options;
    requireSignal(signal);
    if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) {
      throw new InvalidArgumentError(`timeoutMs must be a positive number, not ${describe(timeoutMs)}`);
    }
    if (signal?.aborted) {
      throw new CancelledError('cancelled before the call started', { cause: signal.reason });
    }
    const argsJson = toJson('args', args ?? {});
    return cancellable(this.#pool, signal, (id) => this.#native.call(id, name, argsJson, timeoutMs));
  }
}

module.exports = { Conversation };
