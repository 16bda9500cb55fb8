'use strict';
// HttpServer: a pool served as one MCP server over Streamable HTTP (core's `mcpmux serve`).
// The server itself runs in the core; this object only stands for it.

const { call } = require('./calls');

const SERVE = Symbol('mcpmux.serve');
/** Called by the Pool when it closes: the native close stops the server. */
const DETACH = Symbol('mcpmux.detach');

// The longest interval Node's timers take (2^31 - 1 ms).
const FOREVER = 2 ** 31 - 1;

/**
 * A pool served over Streamable HTTP; made by `pool.serveHttp()`. Like a listening
 * `http.Server`, it keeps the process alive until `stop()` (or the pool's `close()`), unless
 * `unref()` is called. Losing every reference to it does not stop it.
 */
class HttpServer {
  #native;
  #id;
  #url;
  #token;
  #keepAlive;
  #stopping = null;
  #onStop;

  /** @private Use `pool.serveHttp()`. */
  constructor(token, nativePool, started, onStop) {
    if (token !== SERVE) {
      throw new TypeError('use `await pool.serveHttp(settings)` to serve a pool');
    }
    this.#native = nativePool;
    this.#id = started.id;
    this.#url = started.url;
    this.#token = started.token ?? null;
    this.#onStop = onStop;
    // A ref'ed timer holds the event loop open as a listening socket would; its callback holds
    // this object, so the server (and its pool) stays reachable while it listens, ref'ed or not.
    this.#keepAlive = setInterval(() => this, FOREVER);
  }

  /** The URL clients connect to, e.g. `http://127.0.0.1:39127/mcp`. */
  get url() {
    return this.#url;
  }

  /** The bearer token clients send (`Authorization: Bearer <token>`), or `null` with `noAuth`. */
  get token() {
    return this.#token;
  }

  /** Whether it still serves (`stop()` and the pool's `close()` end that). */
  get listening() {
    return this.#keepAlive !== null;
  }

  /** Keeps the process alive while it serves (the default). */
  ref() {
    this.#keepAlive?.ref();
    return this;
  }

  /** Lets the process exit while it serves, as `http.Server.unref()` does. */
  unref() {
    this.#keepAlive?.unref();
    return this;
  }

  /** Stops accepting connections and ends open sessions; resolves once the port is closed.
   * Idempotent. */
  stop() {
    if (this.#stopping === null) {
      this.#release();
      const nativePool = this.#native;
      const id = this.#id;
      this.#stopping = call(() => nativePool.stopHttp(id));
    }
    return this.#stopping;
  }

  /** The pool is closing, and its close stops this server: `stop()` then waits for that. */
  [DETACH](closing) {
    if (this.#stopping !== null) return;
    this.#release();
    this.#stopping = closing.then(
      () => undefined,
      () => undefined,
    );
  }

  #release() {
    if (this.#keepAlive !== null) {
      clearInterval(this.#keepAlive);
      this.#keepAlive = null;
    }
    this.#onStop?.(this);
    this.#onStop = null;
  }
}

// `await using server = await pool.serveHttp()` stops it, where the runtime supports it.
if (typeof Symbol.asyncDispose === 'symbol') {
  HttpServer.prototype[Symbol.asyncDispose] = HttpServer.prototype.stop;
}

module.exports = { HttpServer, SERVE, DETACH };
