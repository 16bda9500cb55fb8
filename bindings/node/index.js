'use strict';
// The public API of the `mcpmux` npm package (types in index.d.ts). All behaviour lives in the
// Rust core; the modules under lib/ turn JSON strings into objects, AbortSignals into
// cancellations, native events into EventEmitter events and native errors into error classes
// with a stable `code`:
//   lib/addon.js         loading the native addon (the platform package), checking its release
//   lib/errors.js        the error classes, and the addon's errors mapped to them by `code`
//   lib/validate.js      argument checks
//   lib/calls.js         calling the addon: errors, cancellation, the native pool of a Pool
//   lib/bridge.js        the core calling JS (host tools, handlers, approvals)
//   lib/pool.js          Pool and EVENT_NAMES
//   lib/serve.js         HttpServer (a pool served as one MCP server)
//   lib/conversation.js  Conversation
//   lib/agent.js         Agent
//   lib/apps.js          AppBridge (MCP Apps: a rendered view's host end)

const { CLASSES } = require('./lib/errors');
const { Pool, EVENT_NAMES } = require('./lib/pool');
const { Conversation } = require('./lib/conversation');
const { Agent } = require('./lib/agent');
const { HttpServer } = require('./lib/serve');
const { AppBridge } = require('./lib/apps');
const { version } = require('./package.json');

module.exports = { Pool, Agent, AppBridge, Conversation, HttpServer, EVENT_NAMES, version, ...CLASSES };
