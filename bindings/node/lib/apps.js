'use strict';
// MCP Apps: the host's end of a rendered view (core's AppBridge). The host carries messages
// between the view's frame and `handle`, and posts back what comes out.

const native = require('./addon');
const { callJson, callSync } = require('./calls');
const { InvalidArgumentError } = require('./errors');
const { requireObject, requireString, toJson } = require('./validate');

class AppBridge {
  #native;

  /** Made by `Pool.appBridge`. */
  constructor(native) {
    this.#native = native;
  }

  /** The view this bridge serves. */
  get view() {
    return JSON.parse(callSync(() => this.#native.view()));
  }

  /** One message the view posted: `{post, host?}`, the messages to post back (in order) and
   * a message only the host can act on. */
  async handle(message) {
    if (typeof message !== 'object' || message === null) {
      throw new InvalidArgumentError('message must be the object the view posted');
    }
    return callJson(() => this.#native.handle(toJson('message', message)));
  }

  /** The tool's arguments: the messages to post now (none before the view is initialized). */
  toolInput(args) {
    requireObject('args', args);
    return JSON.parse(callSync(() => this.#native.toolInput(toJson('args', args))));
  }

  /** The tool's result: the messages to post now (after its input). */
  toolResult(result) {
    requireObject('result', result);
    return JSON.parse(callSync(() => this.#native.toolResult(toJson('result', result))));
  }

  /** The call did not finish: the messages to post now. */
  toolCancelled(reason) {
    requireString('reason', reason);
    return JSON.parse(callSync(() => this.#native.toolCancelled(reason)));
  }

  /** `AppBridge.reply`, for a host that holds only the bridge. */
  reply(id, answer) {
    return AppBridge.reply(id, answer);
  }

  /** A reply to the view's request `id` (one `handle` gave the host): a result, or an Error
   * whose message the view sees. */
  static reply(id, answer) {
    const [result, error] =
      answer instanceof Error ? [null, answer.message] : [toJson('answer', answer ?? {}), null];
    return JSON.parse(callSync(() => native.appBridgeReply(JSON.stringify(id ?? null), result, error)));
  }
}

module.exports = { AppBridge };
