// ES module entry: the same objects as the CommonJS entry, so `instanceof` works across both.
import mcpmux from './index.js';

export const {
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
  UrlElicitationRequiredError,
  InvalidResultError,
} = mcpmux;
export default mcpmux;
