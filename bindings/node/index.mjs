// ES module entry: the same objects as the CommonJS entry, so `instanceof` works across both.
// Loaded with require rather than `import mcpmux from './index.js'`: when the CommonJS entry
// throws (no addon for this platform), Node 20 and 22 also report its error as uncaught, ending
// the process, after the caller of `await import('mcpmux')` has caught it.
import { createRequire } from 'node:module';

const mcpmux = createRequire(import.meta.url)('./index.js');

export const {
  Pool,
  Agent,
  AppBridge,
  Conversation,
  HttpServer,
  EVENT_NAMES,
  version,
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
  UrlElicitationRequiredError,
  InvalidResultError,
} = mcpmux;
export default mcpmux;
