'use strict';
// The error classes of the package, and how an error of the addon becomes one: by its `code`,
// which the addon sets to core's stable error code (bindings/node/src/errors.rs).

/** Base class of every error mcpmux throws; `code` is one of core's stable error codes, and
 * `data` what the error carries besides its message (for the kinds that carry something). */
class McpmuxError extends Error {
  constructor(message, code, options) {
    super(message, options);
    this.code = code;
    this.data = options?.data;
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

// One class per core error kind, by code (core's ErrorKind::ALL; test/mirror.test.js checks
// that none is missing).
const ERROR_CLASSES = new Map(
  Object.entries({
    invalid_config: 'InvalidConfigError',
    invalid_argument: 'InvalidArgumentError',
    not_found: 'NotFoundError',
    connection: 'ConnectionError',
    timeout: 'TimeoutError',
    cancelled: 'CancelledError',
    protocol: 'ProtocolError',
    tool: 'ToolError',
    message_too_large: 'MessageTooLargeError',
    shutting_down: 'ShuttingDownError',
    io: 'IoError',
    url_elicitation_required: 'UrlElicitationRequiredError',
    invalid_result: 'InvalidResultError',
  }).map(([code, name]) => [code, errorClass(name, code)]),
);

// What is wrong with a tool's result, from the error's data.
Object.defineProperty(ERROR_CLASSES.get('invalid_result').prototype, 'problems', {
  get() {
    return Array.isArray(this.data?.problems) ? this.data.problems : [];
  },
});

// The URLs a server asks the user to open, from the error's data.
Object.defineProperty(ERROR_CLASSES.get('url_elicitation_required').prototype, 'elicitations', {
  get() {
    return Array.isArray(this.data?.elicitations) ? this.data.elicitations : [];
  },
});

/** Every error class of the package, by name: what the package exports. */
const CLASSES = Object.freeze(
  Object.fromEntries([McpmuxError, ...ERROR_CLASSES.values()].map((cls) => [cls.name, cls])),
);
const { InvalidArgumentError } = CLASSES;

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

// Codes of the addon's own errors besides core's kinds: a fault inside the addon.
const ADDON_CODES = new Set(['internal']);

/** Turns an error from the addon into the matching McpmuxError subclass. The addon's errors
 * carry core's error code as their `code` (see src/errors.rs); napi's own errors carry a napi
 * status there. */
function fromNative(err) {
  if (err instanceof McpmuxError || !(err instanceof Error)) return err;
  const cls = ERROR_CLASSES.get(err.code);
  if (cls) {
    return new cls(err.message, typeof err.dataJson === 'string' ? { data: JSON.parse(err.dataJson) } : undefined);
  }
  if (ADDON_CODES.has(err.code)) return new McpmuxError(err.message, err.code);
  if (NAPI_ARGUMENT_STATUSES.has(err.code)) {
    return new InvalidArgumentError(err.message, { cause: err });
  }
  return err;
}

module.exports = { ...CLASSES, CLASSES, ERROR_CLASSES, fromNative };
