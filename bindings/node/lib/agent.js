'use strict';
// The agent: core's agent loop over a pool and a provider (a config, or one written in JS).

const { InvalidArgumentError } = require('./errors');
const { bridge, approvalBridge } = require('./bridge');
const { callSync, cancellable, nativeOf } = require('./calls');
const {
  describe,
  requireFunction,
  requireObject,
  requireSignal,
  requireString,
  toJson,
  warn,
} = require('./validate');

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
    return cancellable(nativePool, signal, (id) =>
      this.#native.run(id, prompt, paramsJson, tokens, approveCb),
    );
  }

  /**
   * Answers the pool's sampling requests with this agent's provider, tools included, asking
   * `approve` first when given (its request's `toolId` is `'sampling/createMessage'`).
   */
  handleSampling(options = {}) {
    requireObject('options', options);
    const { approve } = options;
    if (approve !== undefined) requireFunction('approve', approve);
    this.#native.handleSampling(approve ? approvalBridge(this.#pool, approve) : null);
  }
}

// PROVIDER_TYPES for test/mirror.test.js, which checks it against core's provider kinds.
module.exports = { Agent, PROVIDER_TYPES };
