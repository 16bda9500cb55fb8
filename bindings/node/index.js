'use strict';
// The public API of the `mcpmux` npm package (types in index.d.ts). All behaviour lives in the
// Rust core; this layer turns JSON strings into objects, AbortSignals into cancellations, native
// events into EventEmitter events and native errors into error classes with a stable `code`.

const { EventEmitter } = require('node:events');
const path = require('node:path');
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
const MessageTooLargeError = errorClass('MessageTooLargeError', 'message_too_large');
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
    MessageTooLargeError,
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

/** Runs a synchronous native method, mapping its error. */
function callSync(fn) {
  try {
    return fn();
  } catch (err) {
    throw fromNative(err);
  }
}

/** Every event name the core emits (core's EVENT_NAMES), e.g. `'connection:state'`. */
const EVENT_NAMES = Object.freeze(native.eventNames());

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

function isAbsoluteUrl(v) {
  if (typeof v !== 'string') return false;
  try {
    new URL(v);
    return true;
  } catch {
    return false;
  }
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

function requireFunction(name, v) {
  if (typeof v !== 'function') {
    throw new InvalidArgumentError(`${name} must be a function, not ${describe(v)}`);
  }
  return v;
}

function requireSignal(signal) {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError(`signal must be an AbortSignal, not ${describe(signal)}`);
  }
  return signal;
}

function errorMessage(err) {
  if (err instanceof Error) return err.message || err.name || 'Error';
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** Reports an exception from a fire-and-forget callback (progress, tokens) as a warning: it
 * must not take the process down from inside the addon's callback. */
function warn(err) {
  process.emitWarning(err instanceof Error ? err : String(err), 'McpmuxWarning');
}

// ---------------------------------------------------------------------------------------------
// Calling JS from the core: the native side sends `{id, payload}` and waits for
// `hostReply(id, ok, json)`, or sends `{abort: id}` when it stops waiting (see src/bridge.rs).
// ---------------------------------------------------------------------------------------------

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
          throw new TypeError(`the callback's result cannot be sent as JSON: ${err.message}`);
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

/** Asks the approval callback; a throw, or an answer core refuses, denies, with a warning. */
function approvalBridge(nativePool, approve) {
  return bridge(nativePool, async (request) => {
    try {
      const answer = await approve(request);
      native.readHostAnswer('approval', JSON.stringify(answer ?? null) ?? 'null');
      return answer ?? null;
    } catch (err) {
      warn(err);
      return 'deny';
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------------

const OPEN = Symbol('mcpmux.open');
/** The native pool of each Pool, for Agent and Conversation. */
const NATIVE = new WeakMap();

function nativeOf(pool) {
  const n = pool instanceof Pool ? NATIVE.get(pool) : undefined;
  if (!n) throw new InvalidArgumentError(`expected a Pool, not ${describe(pool)}`);
  return n;
}

/** Runs `fn(id)` as a cancellable native call begun with `beginCall`, wired to `signal`. */
async function cancellable(nativePool, signal, fn) {
  const id = nativePool.beginCall();
  const onAbort = () => nativePool.cancelCall(id);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await callJson(() => fn(id));
  } catch (err) {
    if (err instanceof CancelledError && signal?.aborted && err.cause === undefined) {
      err.cause = signal.reason;
    }
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Runs `start(id)`, a native call whose promise rejects with McpmuxErrors, cancellable
 * through `signal` (the id comes from `beginCall`). */
async function withSignal(nativePool, signal, start) {
  const id = nativePool.beginCall();
  const onAbort = () => nativePool.cancelCall(id);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await start(id);
  } catch (err) {
    const mapped = fromNative(err);
    if (mapped instanceof CancelledError && signal.aborted && mapped.cause === undefined) {
      mapped.cause = signal.reason;
    }
    throw mapped;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

const NO_OPTIONS = Object.freeze({});

/** Makes the error a native call rejects with from the addon's message (`initCalls`). */
function makeError(message) {
  return fromNative(new Error(message));
}

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
    NATIVE.set(this, nativePool);
    nativePool.initCalls(makeError);
  }

  // Core's events are forwarded only while this pool has listeners: core then builds no event
  // for each tool call, and nothing crosses to this thread for events nobody hears. The
  // EventEmitter methods that add and remove listeners are wrapped (rather than listening to
  // 'newListener', which `removeAllListeners()` would remove); `once` and
  // `prependOnceListener` go through `on` and `prependListener`. The native callback is a weak
  // thread-safe function: delivering events never keeps the process alive (`ref()` does).
  #forwarding = false;

  #listen(name) {
    if (this.#forwarding || this.#closed || name === 'newListener' || name === 'removeListener') return;
    this.#forwarding = true;
    this.#native.onEvent((json) => {
      const event = JSON.parse(json);
      this.emit(event.type, event);
      this.emit('event', event);
    });
  }

  #settle() {
    if (!this.#forwarding) return;
    const heard = this.eventNames().some(
      (n) => n !== 'newListener' && n !== 'removeListener' && this.listenerCount(n) > 0,
    );
    if (!heard) {
      this.#forwarding = false;
      this.#native.offEvents();
    }
  }

  addListener(name, listener) {
    this.#listen(name);
    return super.addListener(name, listener);
  }

  on(name, listener) {
    this.#listen(name);
    return super.on(name, listener);
  }

  prependListener(name, listener) {
    this.#listen(name);
    return super.prependListener(name, listener);
  }

  removeListener(name, listener) {
    super.removeListener(name, listener);
    this.#settle();
    return this;
  }

  off(name, listener) {
    super.off(name, listener);
    this.#settle();
    return this;
  }

  removeAllListeners(...names) {
    super.removeAllListeners(...names);
    this.#settle();
    return this;
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
    const limit = optionalLimit(options.limit);
    return callJson(() => this.#native.searchTools(query, limit));
  }

  knownTools() {
    return callJson(() => this.#native.knownTools());
  }

  async ensureCatalog(options = {}) {
    requireObject('options', options);
    const { servers = {} } = options;
    requireObject('servers', servers);
    return callJson(() => this.#native.ensureCatalog(toJson('servers', servers)));
  }

  callTool(toolId, args, options) {
    // Not `async`: the promise of the native call is returned as it is (its rejections are
    // already McpmuxErrors, made by `makeError`), which saves a wrapper per call.
    let argsJson, signal, timeoutMs, progress;
    try {
      requireString('toolId', toolId);
      if (args !== undefined && args !== null) requireObject('args', args);
      if (options === undefined) options = NO_OPTIONS;
      else requireObject('options', options);
      let onProgress;
      ({ signal, timeoutMs, onProgress } = options);
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
      argsJson = args === undefined || args === null ? '{}' : toJson('args', args);
      progress = onProgress && ((json) => {
        try {
          onProgress(JSON.parse(json));
        } catch (err) {
          // A throwing callback must not take the process down from inside the addon's
          // callback; it is reported as a warning instead.
          process.emitWarning(err instanceof Error ? err : String(err), 'McpmuxWarning');
        }
      });
    } catch (err) {
      return Promise.reject(err);
    }
    const nativePool = this.#native;
    if (signal === undefined) {
      try {
        return nativePool.callTool(toolId, argsJson, null, timeoutMs, progress);
      } catch (err) {
        return Promise.reject(fromNative(err));
      }
    }
    return withSignal(nativePool, signal, (id) => nativePool.callTool(toolId, argsJson, id, timeoutMs, progress));
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

  // --- host tools -----------------------------------------------------------------------------

  /**
   * Offers a function of the application as a tool named `name`, listed under server `local`
   * and callable by its name. `handler(args, { signal })` may be async; a string becomes text
   * content, an object JSON text plus `structuredContent`, an object with a `content` array is
   * taken as a CallToolResult, and a throw becomes an `isError` result with the message.
   */
  registerTool(tool) {
    requireObject('tool', tool);
    const { name, description = '', inputSchema = { type: 'object', properties: {} }, handler } = tool;
    requireString('name', name);
    if (typeof description !== 'string') {
      throw new InvalidArgumentError(`description must be a string, not ${describe(description)}`);
    }
    requireObject('inputSchema', inputSchema);
    requireFunction('handler', handler);
    const nativePool = this.#native;
    const callback = bridge(nativePool, (args, signal) => handler(args, { signal }));
    return JSON.parse(
      callSync(() => nativePool.registerTool(name, description, toJson('inputSchema', inputSchema), callback)),
    );
  }

  /** Removes a host tool; whether it existed. */
  unregisterTool(name) {
    requireString('name', name);
    return this.#native.unregisterTool(name);
  }

  // --- host requests --------------------------------------------------------------------------

  /**
   * Answers servers' `sampling/createMessage` with `handler({ serverId, serverName, params },
   * { signal })`, which returns a CreateMessageResult (or just its text); a throw refuses with
   * the message. `null` refuses every request. Set it before servers connect.
   */
  setSamplingHandler(handler) {
    if (handler === null || handler === undefined) {
      this.#native.setSamplingHandler(null);
      return;
    }
    requireFunction('handler', handler);
    this.#native.setSamplingHandler(bridge(this.#native, (request, signal) => handler(request, { signal })));
  }

  /**
   * Answers servers' `elicitation/create` with `handler({ serverId, serverName, params },
   * { signal })`, which returns an ElicitResult (`{ action, content }`), or just the content to
   * accept, or `null` to decline; a throw declines with the message. `null` declines every
   * request. Set it before servers connect.
   */
  setElicitationHandler(handler) {
    if (handler === null || handler === undefined) {
      this.#native.setElicitationHandler(null);
      return;
    }
    requireFunction('handler', handler);
    this.#native.setElicitationHandler(bridge(this.#native, (request, signal) => handler(request, { signal })));
  }

  /**
   * Answers servers' `roots/list` with `handler({ serverId, serverName }, { signal })`, asked
   * each time a server wants its roots; it returns roots (`{ uri, name? }` or URI strings). A
   * throw answers the server with an error carrying the message. `null` restores the lists of
   * `setRoots` / `setServerRoots`. Call `notifyRootsChanged()` when its answer changes.
   */
  setRootsHandler(handler) {
    if (handler === null || handler === undefined) {
      this.#native.setRootsHandler(null);
      return;
    }
    requireFunction('handler', handler);
    this.#native.setRootsHandler(bridge(this.#native, (request, signal) => handler(request, { signal })));
  }

  /** Tells every connected server that the roots changed: they ask again. */
  async notifyRootsChanged() {
    await call(() => this.#native.notifyRootsChanged());
  }

  // --- OAuth ----------------------------------------------------------------------------------

  /**
   * Takes users through OAuth authorization of HTTP servers: `authorize({ serverId,
   * serverName, authorizationUrl, redirectUri }, { signal })` sends the user to
   * `authorizationUrl` and resolves to the URL the authorization server redirected to (it
   * carries the code and state); a throw fails the connection with its message.
   * `options.redirectUri` is the redirect URI registered with the authorization server.
   * `null` restores the default: the system browser and a one-shot listener on 127.0.0.1.
   */
  setOAuthHandler(authorize, options) {
    if (authorize === null || authorize === undefined) {
      callSync(() => this.#native.setOauthHandler(null, ''));
      return;
    }
    requireFunction('authorize', authorize);
    requireObject('options', options);
    const { redirectUri } = options;
    if (!isAbsoluteUrl(redirectUri)) {
      throw new InvalidArgumentError(`options.redirectUri must be an absolute URL, not ${describe(redirectUri)}`);
    }
    const callback = bridge(this.#native, async (prompt, signal) => {
      const answer = await authorize(prompt, { signal });
      if (answer instanceof URL) return answer.href;
      if (typeof answer !== 'string' || answer === '') {
        throw new TypeError(`the OAuth handler must resolve to the redirect URL, not ${describe(answer)}`);
      }
      return answer;
    });
    callSync(() => this.#native.setOauthHandler(callback, redirectUri));
  }

  /**
   * Where OAuth tokens live: an object with `load(serverId)`, `save(serverId, credentials)` and
   * `clear(serverId)` (sync or async; `load` answers what `save` got, or `null`/`undefined`),
   * `{ file: path }` (a JSON file, mode 0600), `'memory'` (lost at exit), or `null` for the
   * default, `<configPath>.tokens.json`. The credentials are secrets: never log them.
   */
  setTokenStore(store) {
    const nativePool = this.#native;
    if (store === null || store === undefined) {
      nativePool.setTokenStoreFile(null);
    } else if (store === 'memory') {
      nativePool.setTokenStoreMemory();
    } else if (isPlainObject(store) && 'file' in store) {
      if (typeof store.file !== 'string' || store.file === '') {
        throw new InvalidArgumentError(`store.file must be a path, not ${describe(store.file)}`);
      }
      nativePool.setTokenStoreFile(path.resolve(store.file));
    } else if (store !== null && typeof store === 'object') {
      for (const op of ['load', 'save', 'clear']) {
        if (typeof store[op] !== 'function') {
          throw new InvalidArgumentError(`a token store needs a ${op}() method, not ${describe(store[op])}`);
        }
      }
      nativePool.setTokenStoreJs(
        bridge(nativePool, async ({ op, serverId, credentials }) => {
          if (op === 'load') return (await store.load(serverId)) ?? null;
          if (op === 'save') await store.save(serverId, credentials);
          else if (op === 'clear') await store.clear(serverId);
          else throw new TypeError(`unknown token store operation ${op}`);
          return null;
        }),
      );
    } else {
      throw new InvalidArgumentError(
        `a token store is an object with load/save/clear, { file }, 'memory' or null, not ${describe(store)}`,
      );
    }
  }

  /** Forgets a server's OAuth tokens and disconnects it: its next use authorizes again. */
  async logout(idOrName) {
    requireString('server', idOrName);
    await call(() => this.#native.logout(idOrName));
  }

  /** The roots every server sees unless it has its own. */
  roots() {
    return JSON.parse(this.#native.roots());
  }

  /** Replaces the pool's roots; connected servers are told the list changed. */
  async setRoots(roots) {
    if (!Array.isArray(roots)) throw new InvalidArgumentError(`roots must be an array, not ${describe(roots)}`);
    await call(() => this.#native.setRoots(toJson('roots', roots)));
  }

  /** Gives one server its own roots; `null` returns it to the pool's. */
  async setServerRoots(idOrName, roots) {
    requireString('server', idOrName);
    if (roots !== null && !Array.isArray(roots)) {
      throw new InvalidArgumentError(`roots must be an array or null, not ${describe(roots)}`);
    }
    await call(() => this.#native.setServerRoots(idOrName, toJson('roots', roots)));
  }

  // --- recipes and the canvas -----------------------------------------------------------------

  /** Adds a recipe (markdown with YAML front matter); also offers `widget_display` and `canvas`. */
  registerRecipe(markdown) {
    if (typeof markdown !== 'string') {
      throw new InvalidArgumentError(`a recipe is markdown text, not ${describe(markdown)}`);
    }
    return JSON.parse(callSync(() => this.#native.registerRecipe(markdown)));
  }

  /** Name and description of every recipe. */
  listRecipes() {
    return JSON.parse(this.#native.listRecipes());
  }

  /** A recipe in full, or `null`. */
  getRecipe(name) {
    requireString('name', name);
    return JSON.parse(this.#native.getRecipe(name));
  }

  /** Recipes ranked for `query`. */
  searchRecipes(query, options = {}) {
    if (typeof query !== 'string') {
      throw new InvalidArgumentError(`query must be a string, not ${describe(query)}`);
    }
    requireObject('options', options);
    const limit = optionalLimit(options.limit);
    return JSON.parse(callSync(() => this.#native.searchRecipes(query, limit)));
  }

  /** The canvas document: `{ version, widgets }`. */
  canvas() {
    return JSON.parse(this.#native.canvas());
  }

  /**
   * Calls `listener(change)` after every change of the canvas: `{ change: 'added' | 'updated',
   * widget }`, `{ change: 'removed', id }` or `{ change: 'cleared' }`. Returns a function that
   * unsubscribes; closing the pool ends every subscription.
   */
  onCanvas(listener) {
    requireFunction('listener', listener);
    const nativePool = this.#native;
    const id = callSync(() =>
      nativePool.onCanvas((json) => {
        try {
          listener(JSON.parse(json));
        } catch (err) {
          warn(err);
        }
      }),
    );
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      nativePool.offCanvas(id);
    };
  }

  // --- conversations and agents ---------------------------------------------------------------

  /** A conversation with discovery tools and lazy activation, over the servers `servers` lets
   * through (`{ enabled?: [...], disabled?: [...] }`, ids or names). */
  conversation(options = {}) {
    return new Conversation(this, options);
  }

  /** `new Agent(pool, provider, options)`. */
  agent(provider, options) {
    return new Agent(this, provider, options);
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

// ---------------------------------------------------------------------------------------------
// Conversation
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Agent
// ---------------------------------------------------------------------------------------------

const PROVIDER_TYPES = new Set(['openai', 'remote', 'anthropic', 'ollama']);

/**
 * An agent over a pool's tools and one provider: a config object
 * (`{ type: 'openai' | 'remote' | 'anthropic' | 'ollama', model, ... }`) or a provider
 * implemented in JS (`{ chat(request, { onToken, signal }), name?, model? }`).
 * `new Agent(pool, { provider, ...options })` works too.
 */
class Agent {
  #pool;
  #native;

  constructor(pool, provider, options) {
    const nativePool = nativeOf(pool);
    requireObject('provider', provider);
    if (options === undefined && typeof provider.chat !== 'function' && provider.type === undefined && 'provider' in provider) {
      ({ provider, ...options } = provider);
      requireObject('provider', provider);
    }
    options = options ?? {};
    requireObject('options', options);
    const optionsJson = toJson('options', options);
    this.#pool = nativePool;
    if (typeof provider.chat === 'function') {
      const { name = 'js', model = '' } = provider;
      if (typeof name !== 'string' || typeof model !== 'string') {
        throw new InvalidArgumentError('a JS provider\'s name and model must be strings');
      }
      const chat = bridge(nativePool, async ({ request, stream }, signal, id) => {
        const onToken = (text) => {
          if (stream && typeof text === 'string' && text.length > 0) nativePool.hostToken(id, text);
        };
        return provider.chat(request, { onToken, signal });
      });
      this.#native = callSync(() => nativePool.createAgent(null, chat, name, model, optionsJson));
    } else {
      if (!PROVIDER_TYPES.has(provider.type)) {
        throw new InvalidArgumentError(
          `a provider is { type: 'openai' | 'remote' | 'anthropic' | 'ollama', model, ... } or an object with a chat() function, not ${toJson('provider', provider)}`,
        );
      }
      this.#native = callSync(() => nativePool.createAgent(toJson('provider', provider), null, '', '', optionsJson));
    }
  }

  /** The provider's model. */
  get model() {
    return this.#native.model();
  }

  /** The provider's name (`openai`, `anthropic`, `ollama`, or a JS provider's `name`). */
  get providerName() {
    return this.#native.providerName();
  }

  /** Switches the model for later requests. */
  setModel(model) {
    requireString('model', model);
    this.#native.setModel(model);
  }

  /** The system prompt the next run sends. */
  systemPrompt() {
    return this.#native.systemPrompt();
  }

  /**
   * Runs the loop for one prompt. Resolves with `{ text, transcript, usage, stop, iterations }`;
   * an aborted `signal` ends the run with `stop: 'cancelled'`.
   */
  async run(prompt, options = {}) {
    if (typeof prompt !== 'string') {
      throw new InvalidArgumentError(`prompt must be a string, not ${describe(prompt)}`);
    }
    requireObject('options', options);
    const { history, attachments, servers, onToken, approve, signal } = options;
    requireSignal(signal);
    if (onToken !== undefined) requireFunction('onToken', onToken);
    if (approve !== undefined) requireFunction('approve', approve);
    const params = {};
    if (history !== undefined) params.history = history;
    if (attachments !== undefined) params.attachments = attachments;
    if (servers !== undefined) params.servers = servers;
    const paramsJson = toJson('options', params);
    const tokens = onToken
      ? (text) => {
          try {
            onToken(text);
          } catch (err) {
            warn(err);
          }
        }
      : null;
    const nativePool = this.#pool;
    const approveCb = approve ? approvalBridge(nativePool, approve) : null;
    const id = nativePool.beginCall();
    const onAbort = () => nativePool.cancelCall(id);
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await callJson(() => this.#native.run(id, prompt, paramsJson, tokens, approveCb));
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Answers the pool's sampling requests with this agent's provider, asking `approve` first
   * when given (its request's `toolId` is `'sampling/createMessage'`).
   */
  handleSampling(options = {}) {
    requireObject('options', options);
    const { approve } = options;
    if (approve !== undefined) requireFunction('approve', approve);
    this.#native.handleSampling(approve ? approvalBridge(this.#pool, approve) : null);
  }
}

// `await using pool = await Pool.open(...)` closes the pool, where the runtime supports it.
if (typeof Symbol.asyncDispose === 'symbol') {
  Pool.prototype[Symbol.asyncDispose] = Pool.prototype.close;
}

module.exports = {
  Pool,
  Agent,
  Conversation,
  EVENT_NAMES,
  McpmuxError,
  InvalidConfigError,
  InvalidArgumentError,
  NotFoundError,
  ConnectionError,
  TimeoutError,
  CancelledError,
  ProtocolError,
  ToolError,
  MessageTooLargeError,
  ShuttingDownError,
  IoError,
};
