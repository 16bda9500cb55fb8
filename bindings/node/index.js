'use strict';
// The public API of the `mcpmux` npm package (types in index.d.ts). All behaviour lives in the
// Rust core; this layer turns JSON strings into objects, AbortSignals into cancellations, native
// events into EventEmitter events and native errors into error classes with a stable `code`.

const { EventEmitter } = require('node:events');
const native = require('./native.js');

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** Base class of every error mcpmux throws; `code` is one of core's stable error codes. */
class McpmuxError extends Error {
  constructor(message, code, options) {
    super(message, options);
    this.code = code;
  }
}
McpmuxError.prototype.name = 'McpmuxError';

function errorClass(name, code) {
  const cls = {
    [name]: class extends McpmuxError {
      constructor(message, options) {
        super(message, code, options);
      }
    },
  }[name];
  cls.prototype.name = name;
  cls.code = code;
  return cls;
}

const InvalidConfigError = errorClass('InvalidConfigError', 'invalid_config');
const InvalidArgumentError = errorClass('InvalidArgumentError', 'invalid_argument');
const NotFoundError = errorClass('NotFoundError', 'not_found');
const ConnectionError = errorClass('ConnectionError', 'connection');
const TimeoutError = errorClass('TimeoutError', 'timeout');
const CancelledError = errorClass('CancelledError', 'cancelled');
const ProtocolError = errorClass('ProtocolError', 'protocol');
const ToolError = errorClass('ToolError', 'tool');
const ShuttingDownError = errorClass('ShuttingDownError', 'shutting_down');
const IoError = errorClass('IoError', 'io');

const ERROR_CLASSES = new Map(
  [
    InvalidConfigError,
    InvalidArgumentError,
    NotFoundError,
    ConnectionError,
    TimeoutError,
    CancelledError,
    ProtocolError,
    ToolError,
    ShuttingDownError,
    IoError,
  ].map((cls) => [cls.code, cls]),
);

// napi statuses that mean "a JS value of the wrong type reached the addon".
const NAPI_ARGUMENT_STATUSES = new Set([
  'InvalidArg',
  'ObjectExpected',
  'StringExpected',
  'NameExpected',
  'FunctionExpected',
  'NumberExpected',
  'BooleanExpected',
  'ArrayExpected',
  'BigintExpected',
]);

/** Turns an error from the addon into the matching McpmuxError subclass. */
function fromNative(err) {
  if (err instanceof McpmuxError || !(err instanceof Error)) return err;
  // The addon encodes core's error code as "mcpmux:<code>:<message>" (see src/lib.rs).
  const m = /^mcpmux:([a-z_]+):([\s\S]*)$/.exec(err.message);
  if (m) {
    const cls = ERROR_CLASSES.get(m[1]);
    return cls ? new cls(m[2]) : new McpmuxError(m[2], m[1]);
  }
  if (NAPI_ARGUMENT_STATUSES.has(err.code)) {
    return new InvalidArgumentError(err.message, { cause: err });
  }
  return err;
}

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

// ---------------------------------------------------------------------------------------------
// Argument checks: a clear error for bad input instead of whatever the addon would say.
// ---------------------------------------------------------------------------------------------

function isPlainObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function requireString(name, v) {
  if (typeof v !== 'string' || v.length === 0) {
    throw new InvalidArgumentError(`${name} must be a non-empty string, not ${describe(v)}`);
  }
  return v;
}

function optionalString(name, v) {
  return v === undefined || v === null ? undefined : requireString(name, v);
}

function requireObject(name, v) {
  if (!isPlainObject(v)) {
    throw new InvalidArgumentError(`${name} must be an object, not ${describe(v)}`);
  }
  return v;
}

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? `the string ${JSON.stringify(v)}` : `${typeof v} ${String(v)}`;
}

function toJson(name, v) {
  try {
    return JSON.stringify(v);
  } catch (err) {
    throw new InvalidArgumentError(`${name} cannot be sent as JSON: ${err.message}`, { cause: err });
  }
}

// ---------------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------------

const OPEN = Symbol('mcpmux.open');

/**
 * A pool of MCP server connections over one config file. Create it with `Pool.open()`.
 * Emits every core event under its `type` (`'connection:state'`, `'tool:called'`, ...), and
 * each one also as `'event'`.
 */
class Pool extends EventEmitter {
  #native;
  #closed = false;
  #keepAlive = null;

  /** @private Use `Pool.open()`. */
  constructor(token, nativePool) {
    if (token !== OPEN) {
      throw new TypeError('use `await Pool.open(options)` to create a Pool');
    }
    super();
    this.#native = nativePool;
    // The callback is a weak thread-safe function: delivering events never keeps the process
    // alive. `ref()` is the opt-in for that.
    nativePool.onEvent((json) => {
      const event = JSON.parse(json);
      this.emit(event.type, event);
      this.emit('event', event);
    });
  }

  /** Opens a pool; nothing connects until a server is used. */
  static async open(options = {}) {
    requireObject('options', options);
    const nativePool = await call(() => native.openPool(toJson('options', options)));
    return new Pool(OPEN, nativePool);
  }

  /** The config file this pool reads and writes. */
  get configPath() {
    return this.#native.configPath();
  }

  /** Calls currently in flight. */
  get inFlight() {
    return this.#native.inFlight();
  }

  /** Whether `close()` has been called. */
  get closed() {
    return this.#closed;
  }

  // --- servers --------------------------------------------------------------------------------

  listServers() {
    return callJson(() => this.#native.listServers());
  }

  async getServer(idOrName) {
    requireString('server', idOrName);
    return callJson(() => this.#native.getServer(idOrName));
  }

  async addServer(input) {
    requireObject('server', input);
    return callJson(() => this.#native.addServer(toJson('server', input)));
  }

  async addJson(text) {
    if (typeof text !== 'string') {
      if (!isPlainObject(text)) {
        throw new InvalidArgumentError(`addJson takes JSON text or an object, not ${describe(text)}`);
      }
      text = toJson('servers', text);
    }
    return callJson(() => this.#native.addJson(text));
  }

  async updateServer(idOrName, patch) {
    requireString('server', idOrName);
    requireObject('patch', patch);
    return callJson(() => this.#native.updateServer(idOrName, toJson('patch', patch)));
  }

  async removeServer(idOrName) {
    requireString('server', idOrName);
    return callJson(() => this.#native.removeServer(idOrName));
  }

  async testServer(idOrName) {
    requireString('server', idOrName);
    return callJson(() => this.#native.testServer(idOrName));
  }

  async testConfig(input) {
    requireObject('server', input);
    return callJson(() => this.#native.testConfig(toJson('server', input)));
  }

  async discover(idOrName) {
    requireString('server', idOrName);
    return callJson(() => this.#native.discover(idOrName));
  }

  // --- connections ----------------------------------------------------------------------------

  serverStates() {
    return JSON.parse(this.#native.serverStates());
  }

  async connect(idOrName) {
    requireString('server', idOrName);
    return callJson(() => this.#native.connect(idOrName));
  }

  connectAll() {
    return callJson(() => this.#native.connectAll());
  }

  async disconnect(idOrName) {
    requireString('server', idOrName);
    await call(() => this.#native.disconnect(idOrName));
  }

  // --- tools ----------------------------------------------------------------------------------

  async listTools(server) {
    const s = optionalString('server', server);
    return callJson(() => this.#native.listTools(s));
  }

  async searchTools(query, options = {}) {
    if (typeof query !== 'string') {
      throw new InvalidArgumentError(`query must be a string, not ${describe(query)}`);
    }
    requireObject('options', options);
    const { limit = 10 } = options;
    if (!Number.isInteger(limit) || limit < 1 || limit > 2 ** 31) {
      throw new InvalidArgumentError(`limit must be a positive integer, not ${describe(limit)}`);
    }
    return callJson(() => this.#native.searchTools(query, limit));
  }

  knownTools() {
    return callJson(() => this.#native.knownTools());
  }

  async callTool(toolId, args, options = {}) {
    requireString('toolId', toolId);
    if (args !== undefined && args !== null) requireObject('args', args);
    requireObject('options', options);
    const { signal, timeoutMs, onProgress } = options;
    if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) {
      throw new InvalidArgumentError(`timeoutMs must be a positive number, not ${describe(timeoutMs)}`);
    }
    if (onProgress !== undefined && typeof onProgress !== 'function') {
      throw new InvalidArgumentError(`onProgress must be a function, not ${describe(onProgress)}`);
    }
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new InvalidArgumentError(`signal must be an AbortSignal, not ${describe(signal)}`);
    }
    if (signal?.aborted) {
      throw new CancelledError('cancelled before the call started', { cause: signal.reason });
    }
    const argsJson = toJson('args', args ?? {});
    const progress = onProgress && ((json) => {
      try {
        onProgress(JSON.parse(json));
      } catch (err) {
        // A throwing callback must not take the process down from inside the addon's
        // callback; it is reported as a warning instead.
        process.emitWarning(err instanceof Error ? err : String(err), 'McpmuxWarning');
      }
    });
    const nativePool = this.#native;
    const id = nativePool.beginCall();
    const onAbort = () => nativePool.cancelCall(id);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await callJson(() => nativePool.callTool(id, toolId, argsJson, timeoutMs, progress));
    } catch (err) {
      if (err instanceof CancelledError && signal?.aborted && err.cause === undefined) {
        err.cause = signal.reason;
      }
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  // --- resources ------------------------------------------------------------------------------

  async listResources(server) {
    const s = optionalString('server', server);
    return callJson(() => this.#native.listResources(s));
  }

  async listResourceTemplates(server) {
    const s = optionalString('server', server);
    return callJson(() => this.#native.listResourceTemplates(s));
  }

  async readResource(server, uri) {
    requireString('server', server);
    requireString('uri', uri);
    return callJson(() => this.#native.readResource(server, uri));
  }

  async subscribeResource(server, uri) {
    requireString('server', server);
    requireString('uri', uri);
    await call(() => this.#native.subscribeResource(server, uri));
  }

  async unsubscribeResource(server, uri) {
    requireString('server', server);
    requireString('uri', uri);
    await call(() => this.#native.unsubscribeResource(server, uri));
  }

  // --- prompts --------------------------------------------------------------------------------

  async listPrompts(server) {
    const s = optionalString('server', server);
    return callJson(() => this.#native.listPrompts(s));
  }

  async getPrompt(server, name, args) {
    requireString('server', server);
    requireString('name', name);
    if (args !== undefined && args !== null) requireObject('args', args);
    return callJson(() => this.#native.getPrompt(server, name, toJson('args', args ?? null)));
  }

  // --- lifetime -------------------------------------------------------------------------------

  /**
   * Keeps the process alive while the pool is open (e.g. a service waiting only for events).
   * By default an open pool never does.
   */
  ref() {
    if (!this.#closed && this.#keepAlive === null) {
      // A ref'ed timer is the portable way to hold the event loop open; events themselves
      // arrive through a weak thread-safe function.
      this.#keepAlive = setInterval(() => {}, 2 ** 30);
    }
    return this;
  }

  /** Undoes `ref()`. */
  unref() {
    if (this.#keepAlive !== null) {
      clearInterval(this.#keepAlive);
      this.#keepAlive = null;
    }
    return this;
  }

  /**
   * Shuts down: refuses new calls, lets calls in flight finish up to `shutdownTimeoutMs`,
   * then closes every connection. Idempotent.
   */
  async close() {
    this.#closed = true;
    this.unref();
    await call(() => this.#native.close());
  }
}

// `await using pool = await Pool.open(...)` closes the pool, where the runtime supports it.
if (typeof Symbol.asyncDispose === 'symbol') {
  Pool.prototype[Symbol.asyncDispose] = Pool.prototype.close;
}

module.exports = {
  Pool,
  McpmuxError,
  InvalidConfigError,
  InvalidArgumentError,
  NotFoundError,
  ConnectionError,
  TimeoutError,
  CancelledError,
  ProtocolError,
  ToolError,
  ShuttingDownError,
  IoError,
};
