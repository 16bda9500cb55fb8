// Public API of the `mcpmux` npm package. Data shapes are the Rust core's JSON (camelCase).
/// <reference types="node" />
import { EventEmitter } from 'node:events';

// ---------------------------------------------------------------------------------------------
// Options and records
// ---------------------------------------------------------------------------------------------

/** How a pool behaves; every field is optional. An unknown key is an `InvalidArgumentError`. */
export interface PoolOptions {
  /** The config file; default `$MCPMUX_CONFIG` or the platform default. Electron apps pass a
   * path under `app.getPath('userData')`. */
  configPath?: string;
  /** Also see this project's `scope: "local"` servers. */
  projectPath?: string;
  /** Default per-request timeout (reset by progress notifications). Default 60000. */
  requestTimeoutMs?: number;
  /** Default limit on spawning/connecting plus the handshake. Default 30000. */
  connectTimeoutMs?: number;
  /** How long a server's tool list is trusted without asking again. Default 300000. */
  toolsTtlMs?: number;
  /** Background health checks of idle connections; 0 turns them off. Default 60000. */
  healthCheckIntervalMs?: number;
  /** A connection idle longer than this is checked before reuse. Default 30000. */
  healthCheckIdleMs?: number;
  /** Reconnect by itself when a connection drops. Default true. */
  autoReconnect?: boolean;
  /** Give up (state `error`) after this many failed reconnect attempts. Default 6. */
  maxReconnectAttempts?: number;
  /** How many servers `connectAll` connects at once. Default 8. */
  connectConcurrency?: number;
  /** How long `close` waits for calls in flight. Default 5000. */
  shutdownTimeoutMs?: number;
  /** Connect a server in the background right after `addServer`. Default true. */
  connectOnAdd?: boolean;
  /** Client name sent in the handshake. Default "mcpmux". */
  clientName?: string;
  /** Largest single message accepted from a server, in bytes. */
  maxMessageBytes?: number;
}

export type TransportType = 'stdio' | 'http' | 'sse' | 'websocket';
export type Scope = 'user' | 'local';
export type InstallSource = 'builtin' | 'manual' | 'protocol' | 'unknown';

/** Connection settings: `command`/`args`/`env`/`cwd` for stdio, `url`/`headers` otherwise. */
export interface ServerConfig {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
}

/** Per-server time limits in milliseconds; unset ones use the pool's. */
export interface Timeouts {
  connectMs?: number;
  requestMs?: number;
}

/** One MCP server as stored in the config file. */
export interface ServerRecord {
  /** `mcp_{timestamp}_{random}`; never changes. */
  id: string;
  name: string;
  type: TransportType;
  scope: Scope;
  config: ServerConfig;
  isActive: boolean;
  isTrusted: boolean;
  disabledTools: string[];
  disabledAutoApproveTools: string[];
  installSource: InstallSource;
  projectPath?: string;
  /** Milliseconds since the Unix epoch. */
  createdAt: number;
  updatedAt?: number;
  timeouts?: Timeouts;
}

/** What `addServer` takes: everything but `name` and `config` has a default. `type` is inferred
 * from `config` when absent. */
export interface ServerInput {
  name: string;
  type?: TransportType;
  scope?: Scope;
  config: ServerConfig;
  isActive?: boolean;
  isTrusted?: boolean;
  disabledTools?: string[];
  disabledAutoApproveTools?: string[];
  installSource?: InstallSource;
  projectPath?: string;
  timeouts?: Timeouts;
}

/** A partial update; absent fields stay as they are. Unknown keys are errors. */
export interface ServerPatch {
  name?: string;
  type?: TransportType;
  scope?: Scope;
  config?: ServerConfig;
  isActive?: boolean;
  isTrusted?: boolean;
  disabledTools?: string[];
  disabledAutoApproveTools?: string[];
  installSource?: InstallSource;
  projectPath?: string;
  timeouts?: Timeouts;
}

/** The outcome of one entry of `addJson`. */
export interface ImportResult {
  name: string;
  success: boolean;
  record?: ServerRecord;
  error?: string;
}

/** Whether a server connects, and its tools if so. */
export interface TestResult {
  success: boolean;
  tools: string[];
  error?: string;
  protocolVersion?: string;
  durationMs: number;
}

/** An MCP tool as the server describes it. */
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
}

/** An MCP prompt as the server describes it. */
export interface Prompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; title?: string; description?: string; required?: boolean }>;
  [key: string]: unknown;
}

/** An MCP resource as the server describes it. */
export interface Resource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  [key: string]: unknown;
}

/** An MCP resource template as the server describes it. */
export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  [key: string]: unknown;
}

/** Everything a server offers; prompts and resources may fail on their own. */
export interface DiscoverResult {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  promptsError?: string;
  resourcesError?: string;
}

/** A tool under its pool-unique id `mcp__{server}__{tool}` (at most 64 characters). */
export interface ToolInfo {
  id: string;
  serverId: string;
  serverName: string;
  /** The tool's own name on its server. */
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** One result of `searchTools`. */
export interface SearchHit {
  /** The tool's pool id, for `callTool`. */
  id: string;
  score: number;
  serverName: string;
  /** The tool's own name on its server. */
  name: string;
  /** The first sentence of the description, at most 160 characters. */
  description: string;
}

export interface ResourceInfo extends Resource {
  serverId: string;
  serverName: string;
}

export interface ResourceTemplateInfo extends ResourceTemplate {
  serverId: string;
  serverName: string;
}

export interface PromptInfo extends Prompt {
  serverId: string;
  serverName: string;
}

/** One content block of a tool result or prompt message (text, image, audio, resource, ...). */
export interface ContentBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  [key: string]: unknown;
}

/** A tool's result. `isError: true` is a result, not an exception. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  /** Base64. */
  blob?: string;
  [key: string]: unknown;
}

export interface ReadResourceResult {
  contents: ResourceContents[];
  [key: string]: unknown;
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
  [key: string]: unknown;
}

export type ConnectionState = 'disconnected' | 'connecting' | 'connected' | 'error';
export type ConnectionPhase =
  | 'transport'
  | 'handshake'
  | 'ready'
  | 'backoff'
  | 'closed'
  | 'lost'
  | 'unhealthy'
  | 'failed';

/** A snapshot of one server's connection. */
export interface ServerStatus {
  id: string;
  name: string;
  state: ConnectionState;
  error?: string;
  protocolVersion?: string;
  /** Process id of a stdio server's child. */
  pid?: number;
}

/** One progress update of a call. */
export interface Progress {
  progress: number;
  total?: number | null;
  message?: string | null;
}

export interface CallToolOptions {
  /** Aborting it cancels the call: the server gets `notifications/cancelled` and the promise
   * rejects with a `CancelledError`. */
  signal?: AbortSignal;
  /** Overrides the server's and the pool's request timeout; reset by progress. */
  timeoutMs?: number;
  /** Receives the call's progress notifications. */
  onProgress?: (progress: Progress) => void;
}

// ---------------------------------------------------------------------------------------------
// Events (seed 003's names: the `type` of each event)
// ---------------------------------------------------------------------------------------------

export interface ServerConnectedEvent {
  type: 'server:connected';
  serverId: string;
  serverName: string;
  protocolVersion: string;
}
export interface ConnectionStateEvent {
  type: 'connection:state';
  serverId: string;
  serverName: string;
  state: ConnectionState;
  phase: ConnectionPhase;
  error?: string;
  /** Reconnect attempt number, when reconnecting. */
  attempt?: number;
}
export interface ServersChangedEvent {
  type: 'servers:changed';
}
export interface ToolCalledEvent {
  type: 'tool:called';
  serverId: string;
  toolName: string;
  toolId: string;
  durationMs: number;
  success: boolean;
}
export interface ToolsChangedEvent {
  type: 'tools:changed';
  serverId: string;
}
export interface ResourceUpdatedEvent {
  type: 'resource:updated';
  serverId: string;
  uri: string;
}
export interface ProgressEvent {
  type: 'progress';
  serverId: string;
  progressToken: string | number;
  progress: number;
  total?: number;
  message?: string;
}
export interface LogEvent {
  type: 'log';
  serverId: string;
  level: string;
  /** `notification`, `stderr` or `transport`. */
  source: string;
  message: string;
}

/** Every event a pool emits, by name. */
export interface PoolEvents {
  'server:connected': ServerConnectedEvent;
  'connection:state': ConnectionStateEvent;
  'servers:changed': ServersChangedEvent;
  'tool:called': ToolCalledEvent;
  'tools:changed': ToolsChangedEvent;
  'resource:updated': ResourceUpdatedEvent;
  progress: ProgressEvent;
  log: LogEvent;
  /** Every event, whatever its type. */
  event: PoolEvent;
}

export type PoolEvent =
  | ServerConnectedEvent
  | ConnectionStateEvent
  | ServersChangedEvent
  | ToolCalledEvent
  | ToolsChangedEvent
  | ResourceUpdatedEvent
  | ProgressEvent
  | LogEvent;
export type PoolEventName = keyof PoolEvents;

// ---------------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------------

/**
 * A pool of MCP server connections over one config file. Servers connect on first use.
 * Events are delivered through a weak handle: an open pool never keeps the process alive
 * unless `ref()` is called.
 */
export declare class Pool extends EventEmitter {
  private constructor();
  /** Opens a pool; rejects with `InvalidArgumentError` on an unknown option and
   * `InvalidConfigError` on an unusable config file. */
  static open(options?: PoolOptions): Promise<Pool>;

  /** The config file this pool reads and writes. */
  readonly configPath: string;
  /** Calls currently in flight. */
  readonly inFlight: number;
  /** Whether `close()` has been called. */
  readonly closed: boolean;

  /** Every visible server, re-read from the config file, in creation order. */
  listServers(): Promise<ServerRecord[]>;
  /** A server by id or name. */
  getServer(idOrName: string): Promise<ServerRecord>;
  addServer(input: ServerInput): Promise<ServerRecord>;
  /** Imports servers from JSON in the usual `mcpServers` formats, or a single server. */
  addJson(json: string | Record<string, unknown>): Promise<ImportResult[]>;
  updateServer(idOrName: string, patch: ServerPatch): Promise<ServerRecord>;
  /** Removes a server, closing its connection; resolves with the removed record. */
  removeServer(idOrName: string): Promise<ServerRecord>;
  /** Connects to a stored server and lists its tools, without failing on a bad server. */
  testServer(idOrName: string): Promise<TestResult>;
  /** Like `testServer`, for a server that is not stored. */
  testConfig(input: ServerInput): Promise<TestResult>;
  /** Everything a server offers. */
  discover(idOrName: string): Promise<DiscoverResult>;

  /** Connection state of every visible server. */
  serverStates(): ServerStatus[];
  /** Connects one server now. */
  connect(idOrName: string): Promise<ServerStatus>;
  /** Connects every active server; one failing server never fails the others. */
  connectAll(): Promise<ServerStatus[]>;
  /** Closes one server's connection; it reconnects on next use. */
  disconnect(idOrName: string): Promise<void>;

  /** Tools of every active server, or of one. */
  listTools(server?: string): Promise<ToolInfo[]>;
  /** Ranked tools for `query` (names, titles, descriptions, parameter names), best first,
   * from the tools already known: it never connects a server. `limit` defaults to 10. */
  searchTools(query: string, options?: { limit?: number }): Promise<SearchHit[]>;
  /** Every tool known without connecting anything (live lists, else the last known ones). */
  knownTools(): Promise<ToolInfo[]>;
  /** Calls a tool by its pool id (`ToolInfo.id`). */
  callTool(
    toolId: string,
    args?: Record<string, unknown> | null,
    options?: CallToolOptions,
  ): Promise<CallToolResult>;

  listResources(server?: string): Promise<ResourceInfo[]>;
  listResourceTemplates(server?: string): Promise<ResourceTemplateInfo[]>;
  readResource(server: string, uri: string): Promise<ReadResourceResult>;
  /** Changes arrive as `resource:updated` events. */
  subscribeResource(server: string, uri: string): Promise<void>;
  unsubscribeResource(server: string, uri: string): Promise<void>;

  listPrompts(server?: string): Promise<PromptInfo[]>;
  getPrompt(server: string, name: string, args?: Record<string, string> | null): Promise<GetPromptResult>;

  /** Keeps the process alive while the pool is open. */
  ref(): this;
  /** Undoes `ref()` (the default). */
  unref(): this;
  /** Refuses new calls, lets calls in flight finish (up to `shutdownTimeoutMs`), then closes
   * every connection. Idempotent. */
  close(): Promise<void>;

  on<K extends PoolEventName>(event: K, listener: (event: PoolEvents[K]) => void): this;
  once<K extends PoolEventName>(event: K, listener: (event: PoolEvents[K]) => void): this;
  off<K extends PoolEventName>(event: K, listener: (event: PoolEvents[K]) => void): this;
  addListener<K extends PoolEventName>(event: K, listener: (event: PoolEvents[K]) => void): this;
  removeListener<K extends PoolEventName>(event: K, listener: (event: PoolEvents[K]) => void): this;
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** core's stable error codes. */
export type ErrorCode =
  | 'invalid_config'
  | 'invalid_argument'
  | 'not_found'
  | 'connection'
  | 'timeout'
  | 'cancelled'
  | 'protocol'
  | 'tool'
  | 'shutting_down'
  | 'io';

/** Base class of every error mcpmux throws. */
export declare class McpmuxError extends Error {
  constructor(message: string, code: ErrorCode | string, options?: ErrorOptions);
  readonly code: ErrorCode | string;
}
/** The config file exists but cannot be used; it is left untouched. */
export declare class InvalidConfigError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'invalid_config';
  static readonly code: 'invalid_config';
}
/** Something unusable was passed (bad JSON, unknown option, duplicate name, ...). */
export declare class InvalidArgumentError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'invalid_argument';
  static readonly code: 'invalid_argument';
}
/** A server, tool, resource or prompt that does not exist. */
export declare class NotFoundError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'not_found';
  static readonly code: 'not_found';
}
/** The server could not be reached, or its connection died. */
export declare class ConnectionError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'connection';
  static readonly code: 'connection';
}
/** No answer within the allowed time. */
export declare class TimeoutError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'timeout';
  static readonly code: 'timeout';
}
/** The call was cancelled (an aborted `AbortSignal`). */
export declare class CancelledError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'cancelled';
  static readonly code: 'cancelled';
}
/** The server broke the protocol or answered with a JSON-RPC error. */
export declare class ProtocolError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'protocol';
  static readonly code: 'protocol';
}
/** A tool call was answered with a JSON-RPC error (a result with `isError` is not an error). */
export declare class ToolError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'tool';
  static readonly code: 'tool';
}
/** The pool is closing and takes no new work. */
export declare class ShuttingDownError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'shutting_down';
  static readonly code: 'shutting_down';
}
/** A file or process operation failed. */
export declare class IoError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'io';
  static readonly code: 'io';
}
