'use strict';
// The Pool: a config file's servers, their tools, resources and prompts, and core's events.

const { EventEmitter } = require('node:events');
const path = require('node:path');
const native = require('./addon');
const { CancelledError, InvalidArgumentError, ShuttingDownError, fromNative } = require('./errors');
const { bridge, optionalLimit } = require('./bridge');
const { Agent } = require('./agent');
const { AppBridge } = require('./apps');
const { call, callJson, callSync, NATIVE, withSignal } = require('./calls');
const { Conversation } = require('./conversation');
const { DETACH, HttpServer, SERVE } = require('./serve');
const {
  describe,
  isAbsoluteUrl,
  isPlainObject,
  optionalString,
  requireFunction,
  requireObject,
  requireString,
  toJson,
  warn,
} = require('./validate');

/** Every event name the core emits (core's EVENT_NAMES), e.g. `'connection:state'`. */
const EVENT_NAMES = Object.freeze(native.eventNames());

const OPEN = Symbol('mcpmux.open');
const NO_OPTIONS = Object.freeze({});

// OpenTelemetry is optional: with its API installed, tool calls join the current trace.
let otel;
try {
  otel = require('@opentelemetry/api');
} catch {
  otel = undefined;
}

/** The W3C trace context (`traceparent`, `tracestate`) of the active OpenTelemetry span, for
 * a request's `_meta`; `undefined` outside a trace or without OpenTelemetry. */
function traceMeta() {
  const span = otel?.trace.getActiveSpan();
  if (!span) return undefined;
  const c = span.spanContext();
  if (!otel.isSpanContextValid(c)) return undefined;
  const flags = (c.traceFlags & 0xff).toString(16).padStart(2, '0');
  const meta = { traceparent: `00-${c.traceId}-${c.spanId}-${flags}` };
  const state = c.traceState?.serialize();
  if (state) meta.tracestate = state;
  return meta;
}

/** Throws an InvalidArgumentError for a call option of the wrong type (`callTool`, `startTask`). */
function checkCallOptions({ signal, timeoutMs, onProgress, onTask }) {
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) {
    throw new InvalidArgumentError(`timeoutMs must be a positive number, not ${describe(timeoutMs)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new InvalidArgumentError(`onProgress must be a function, not ${describe(onProgress)}`);
  }
  if (onTask !== undefined && typeof onTask !== 'function') {
    throw new InvalidArgumentError(`onTask must be a function, not ${describe(onTask)}`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError(`signal must be an AbortSignal, not ${describe(signal)}`);
  }
}

/** The data options of a call (`validate`, `meta`, `maxTotalMs`, and the active trace) as
 * core's JSON, or `undefined` when there is none (the common call pays nothing for them). */
function callSettings({ validate, meta, maxTotalMs }) {
  const trace = traceMeta();
  if (trace) meta = { ...trace, ...(meta ?? {}) };
  if (validate === undefined && meta === undefined && maxTotalMs === undefined) return undefined;
  if (validate !== undefined && typeof validate !== 'boolean') {
    throw new InvalidArgumentError(`validate must be a boolean, not ${describe(validate)}`);
  }
  if (meta !== undefined && meta !== null) requireObject('meta', meta);
  if (maxTotalMs !== undefined && !(typeof maxTotalMs === 'number' && maxTotalMs > 0 && Number.isFinite(maxTotalMs))) {
    throw new InvalidArgumentError(`maxTotalMs must be a positive number, not ${describe(maxTotalMs)}`);
  }
  return toJson('options', {
    validate,
    meta: meta ?? undefined,
    maxTotalMs: maxTotalMs === undefined ? undefined : Math.max(1, Math.round(maxTotalMs)),
  });
}

/** The `refresh` flag of a list call's options (`undefined`: from the caches). */
function refreshOf(options) {
  if (options === undefined || options === null) return undefined;
  requireObject('options', options);
  const { refresh } = options;
  if (refresh !== undefined && typeof refresh !== 'boolean') {
    throw new InvalidArgumentError(`refresh must be a boolean, not ${describe(refresh)}`);
  }
  return refresh;
}

/**
 * A pool of MCP server connections over one config file. Create it with `Pool.open()`.
 * Emits every core event under its `type` (`'connection:state'`, `'tool:called'`, ...), and
 * each one also as `'event'`.
 */
/** A callback of the addon's JSON, parsed; a throwing callback must not take the process down
 * from inside the addon's callback, so it is reported as a warning instead. */
function toldBy(callback) {
  return (json) => {
    try {
      callback(JSON.parse(json));
    } catch (err) {
      process.emitWarning(err instanceof Error ? err : String(err), 'McpmuxWarning');
    }
  };
}

/**
 * A tool call started with `startTask`: core's `TaskRun` (the status of its task, the next one,
 * cancel, the result) in JS's idiom: JSON parsed, errors as the package's classes, the result
 * kept for every `result()`.
 */
class TaskRun {
  #native;
  #signal;
  #result;

  constructor(native, signal) {
    this.#native = native;
    this.#signal = signal;
    if (signal?.aborted) native.cancel();
    else signal?.addEventListener('abort', () => native.cancel(), { once: true });
  }

  /** The task's last status, if the server announced one. */
  get status() {
    const json = this.#native.status();
    return json == null ? null : JSON.parse(json);
  }

  /** Resolves with the next status, or null once the call has ended (after its last status). */
  async changed() {
    let json;
    try {
      json = await this.#native.changed();
    } catch (err) {
      throw fromNative(err);
    }
    return json == null ? null : JSON.parse(json);
  }

  /** Cancels the call, and the task at the server: `result()` then rejects with CancelledError. */
  cancel() {
    this.#native.cancel();
  }

  /** The call's result, as `callTool` gives it. */
  result() {
    this.#result ??= this.#native.result().then(JSON.parse, (err) => {
      const mapped = fromNative(err);
      if (mapped instanceof CancelledError && this.#signal?.aborted && mapped.cause === undefined) {
        mapped.cause = this.#signal.reason;
      }
      throw mapped;
    });
    return this.#result;
  }
}

class Pool extends EventEmitter {
  #native;
  #closed = false;
  #keepAlive = null;
  /** The servers `serveHttp` started that still serve; `close()` stops them. */
  #servers = new Set();

  /** @private Use `Pool.open()`. */
  constructor(token, nativePool) {
    if (token !== OPEN) {
      throw new TypeError('use `await Pool.open(options)` to create a Pool');
    }
    super();
    this.#native = nativePool;
    NATIVE.set(this, nativePool);
    // callTool's promises reject with the addon's errors mapped to the package's classes, and
    // resolve with what JSON.parse makes of the result's JSON.
    nativePool.initCalls(fromNative, JSON.parse);
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

  async approveServer(idOrName) {
    requireString('server', idOrName);
    return callJson(() => this.#native.approveServer(idOrName));
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

  async listTools(server, options) {
    const s = optionalString('server', server);
    const refresh = refreshOf(options);
    return callJson(() => this.#native.listTools(s, refresh));
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
    // already McpmuxErrors, made by `fromNative`), which saves a wrapper per call.
    let argsJson, signal, timeoutMs, progress, settings, told;
    try {
      requireString('toolId', toolId);
      if (args !== undefined && args !== null) requireObject('args', args);
      if (options === undefined) options = NO_OPTIONS;
      else requireObject('options', options);
      let onProgress, onTask;
      ({ signal, timeoutMs, onProgress, onTask } = options);
      settings = callSettings(options);
      checkCallOptions(options);
      if (signal?.aborted) {
        throw new CancelledError('cancelled before the call started', { cause: signal.reason });
      }
      argsJson = args === undefined || args === null ? '{}' : toJson('args', args);
      progress = onProgress && toldBy(onProgress);
      told = onTask && toldBy(onTask);
    } catch (err) {
      return Promise.reject(err);
    }
    const nativePool = this.#native;
    if (signal === undefined) {
      try {
        return nativePool.callTool(toolId, argsJson, null, timeoutMs, progress, settings, told);
      } catch (err) {
        return Promise.reject(fromNative(err));
      }
    }
    return withSignal(nativePool, signal, (id) =>
      nativePool.callTool(toolId, argsJson, id, timeoutMs, progress, settings, told),
    );
  }

  startTask(toolId, args, options = {}) {
    requireString('toolId', toolId);
    if (args !== undefined && args !== null) requireObject('args', args);
    requireObject('options', options);
    const { signal, timeoutMs, onProgress } = options;
    const settings = callSettings(options);
    checkCallOptions(options);
    const argsJson = args === undefined || args === null ? '{}' : toJson('args', args);
    const progress = onProgress && toldBy(onProgress);
    const native = callSync(() =>
      this.#native.startTask(toolId, argsJson, timeoutMs, progress, settings),
    );
    return new TaskRun(native, signal);
  }

  // --- resources ------------------------------------------------------------------------------

  async listResources(server, options) {
    const s = optionalString('server', server);
    const refresh = refreshOf(options);
    return callJson(() => this.#native.listResources(s, refresh));
  }

  async listResourceTemplates(server, options) {
    const s = optionalString('server', server);
    const refresh = refreshOf(options);
    return callJson(() => this.#native.listResourceTemplates(s, refresh));
  }

  async readResource(server, uri) {
    requireString('server', server);
    requireString('uri', uri);
    return callJson(() => this.#native.readResource(server, uri));
  }

  async appView(toolId) {
    requireString('toolId', toolId);
    return callJson(() => this.#native.appView(toolId));
  }

  async appCall(view, name, args = {}) {
    requireObject('view', view);
    requireString('name', name);
    requireObject('args', args);
    return callJson(() =>
      this.#native.appCall(toJson('view', view), name, toJson('args', args)),
    );
  }

  async appReadResource(view, uri) {
    requireObject('view', view);
    requireString('uri', uri);
    return callJson(() => this.#native.appReadResource(toJson('view', view), uri));
  }

  appBridge(view, hostContext = {}) {
    requireObject('view', view);
    requireObject('hostContext', hostContext);
    return new AppBridge(
      callSync(() => this.#native.appBridge(toJson('view', view), toJson('hostContext', hostContext))),
    );
  }

  async listSkills(server) {
    const s = optionalString('server', server);
    return callJson(() => this.#native.listSkills(s));
  }

  async loadSkill(server, skill) {
    requireString('server', server);
    requireString('skill', skill);
    return callJson(() => this.#native.loadSkill(server, skill));
  }

  async readSkillFile(server, skill, uri) {
    requireString('server', server);
    requireString('skill', skill);
    requireString('uri', uri);
    return callJson(() => this.#native.readSkillFile(server, skill, uri));
  }

  async complete(server, request) {
    requireString('server', server);
    requireObject('request', request);
    const { prompt, resource, argument, value, context } = request;
    if ((prompt === undefined) === (resource === undefined)) {
      throw new InvalidArgumentError('complete() takes one of prompt and resource');
    }
    requireString('argument', argument);
    if (typeof value !== 'string') {
      throw new InvalidArgumentError(`value must be a string, not ${describe(value)}`);
    }
    const ref =
      prompt !== undefined
        ? { type: 'ref/prompt', name: requireString('prompt', prompt) }
        : { type: 'ref/resource', uri: requireString('resource', resource) };
    const params = { ref, argument: { name: argument, value } };
    if (context !== undefined && context !== null) {
      requireObject('context', context);
      params.context = { arguments: context };
    }
    return callJson(() => this.#native.complete(server, toJson('request', params)));
  }

  async request(server, method, params) {
    requireString('server', server);
    requireString('method', method);
    if (params !== undefined && params !== null) requireObject('params', params);
    return callJson(() => this.#native.request(server, method, toJson('params', params ?? null)));
  }

  async notify(server, method, params) {
    requireString('server', server);
    requireString('method', method);
    if (params !== undefined && params !== null) requireObject('params', params);
    await call(() => this.#native.notify(server, method, toJson('params', params ?? null)));
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

  async listPrompts(server, options) {
    const s = optionalString('server', server);
    const refresh = refreshOf(options);
    return callJson(() => this.#native.listPrompts(s, refresh));
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
   * the message. `null` refuses every request. With `{ tools: true }` the handler takes the
   * request's `tools` and `toolChoice` and may answer `tool_use` content; servers send tools
   * only to such a handler. Set it before servers connect.
   */
  setSamplingHandler(handler, options = {}) {
    if (handler === null || handler === undefined) {
      this.#native.setSamplingHandler(null);
      return;
    }
    requireFunction('handler', handler);
    requireObject('options', options);
    const { tools = false } = options;
    if (typeof tools !== 'boolean') {
      throw new InvalidArgumentError(`tools must be a boolean, not ${describe(tools)}`);
    }
    this.#native.setSamplingHandler(
      bridge(this.#native, (request, signal) => handler(request, { signal })),
      tools,
    );
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

  // --- serving --------------------------------------------------------------------------------

  /**
   * Serves the pool as one MCP server over Streamable HTTP (at `<url>`, path `/mcp`), the way
   * `mcpmux serve --http` does: every server's tools under `SERVER__TOOL`, or the search tools
   * (`settings.mode`). Core checks `settings`: a bad one rejects with `InvalidArgumentError`
   * naming the fix. The server keeps the process alive until `stop()` or `close()`, like a
   * listening `http.Server` (`unref()` lets the process exit).
   */
  async serveHttp(settings) {
    if (settings === undefined || settings === null) settings = {};
    requireObject('settings', settings);
    if (this.#closed) throw new ShuttingDownError('the pool is closed: it cannot be served');
    const nativePool = this.#native;
    const started = await callJson(() => nativePool.serveHttp(toJson('settings', settings)));
    const servers = this.#servers;
    const server = new HttpServer(SERVE, nativePool, started, (s) => servers.delete(s));
    if (this.#closed) {
      // close() began while it was binding: the native close stops it (or already has).
      server[DETACH](Promise.resolve());
      throw new ShuttingDownError('the pool was closed while it was being served');
    }
    servers.add(server);
    return server;
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
   * Shuts down: stops the servers `serveHttp` started, refuses new calls, lets calls in flight
   * finish up to `shutdownTimeoutMs`, then closes every connection. Idempotent.
   */
  async close() {
    this.#closed = true;
    this.unref();
    const closing = call(() => this.#native.close());
    for (const server of [...this.#servers]) server[DETACH](closing);
    this.#servers.clear();
    await closing;
  }
}

// `await using pool = await Pool.open(...)` closes the pool, where the runtime supports it.
if (typeof Symbol.asyncDispose === 'symbol') {
  Pool.prototype[Symbol.asyncDispose] = Pool.prototype.close;
}

module.exports = { Pool, EVENT_NAMES };
