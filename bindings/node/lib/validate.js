'use strict';
// Argument checks: a clear error for bad input instead of whatever the addon would say.

const { InvalidArgumentError } = require('./errors');

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

module.exports = {
  isPlainObject,
  requireString,
  optionalString,
  isAbsoluteUrl,
  requireObject,
  describe,
  toJson,
  requireFunction,
  requireSignal,
  errorMessage,
  warn,
};
