// Public API of the `mcpmux` npm package. Data shapes are the Rust core's JSON (camelCase).
// Between "@generated" and "@end": each member's name, whether it may be absent, and its type,
// and the literal types, written from core's JSON Schemas by tests/tests/integration/mirrors
// (which fails CI when they drift); the doc comments are this file's own, kept as written.
// Refresh: MCPMUX_UPDATE_MIRRORS=1 cargo test -p mcpmux-tests --test integration mirrors
/// <reference types="node" />
import { EventEmitter } from 'node:events';

// ---------------------------------------------------------------------------------------------
// Options and records
// ---------------------------------------------------------------------------------------------

/** How a pool behaves; every field is optional. An unknown key is an `InvalidArgumentError`. */
export interface PoolOptions {
  // @generated PoolOptions
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
  /** Connect a server and record its tools in the catalog, in the background, right after
   * `addServer` / `addJson` (and after a change of its config). Default true. */
  connectOnAdd?: boolean;
  /** Client name sent in the handshake. Default "mcpmux". */
  clientName?: string;
  /** Largest single message accepted from a server, in bytes. */
  maxMessageBytes?: number;
  /** How many rounds a call, `getPrompt` or `readResource` may take when a 2026-07-28
   * server answers `input_required` (asking for sampling, elicitation or roots) before it
   * fails. Default 10. */
  maxInputRounds?: number;
  /** Ask servers for their log messages (`log` events) from this level up: in every request
   * to a 2026-07-28 server, with `logging/setLevel` to older ones; a server's own `logLevel`
   * wins. Unset (the default): 2026-07-28 servers send none, older ones what they choose. */
  logLevel?: LogLevel;
  /** Stop a server's connection (a stdio server's process) after this many ms without a
   * request; the next request starts it again, and lists and search answer from the catalog
   * meanwhile. A server with resource subscriptions or a request in flight is kept. 0 (the
   * default) keeps every connection. */
  idleStopMs?: number;
  /** Render MCP Apps (`io.modelcontextprotocol/ui`): the pool declares the extension with
   * these view types (`{}`: HTML views), so servers offer their views; see `Pool.appView`.
   * Unset (the default): off. */
  apps?: AppsOptions;
  // @end
}

/** A host's opt-in to MCP Apps. */
export interface AppsOptions {
  // @generated AppsOptions
  /** The view types the host renders (default `['text/html;profile=mcp-app']`). */
  mimeTypes?: string[];
  // @end
}

// @generated literal types
/** Why the policy asks about a call: the `reason` of an [`ApprovalRequest`], by its name. */
export type ApprovalReason =
  | 'untrusted_server'
  | 'changed_since_trusted'
  | 'new_since_trusted'
  | 'not_auto_approved'
  | 'destructive'
  | 'not_read_only'
  | 'always'
  | 'sampling';
export type ConnectionState = 'disconnected' | 'connecting' | 'connected' | 'error';
export type InstallSource = 'builtin' | 'manual' | 'protocol' | 'unknown';
/** Server log severities, least severe first (syslog's, as MCP names them). */
export type LogLevel =
  | 'debug'
  | 'info'
  | 'notice'
  | 'warning'
  | 'error'
  | 'critical'
  | 'alert'
  | 'emergency';
/** What of the network a sandboxed server may reach. */
export type Network = 'none' | 'all';
/** How a client gets its OAuth tokens: a user signs in (with PKCE), machine to machine,
 * enterprise-managed (cross-app access: the user's ID token from `idp` becomes an ID-JAG that
 * `clientId`/`clientSecret` redeem at the server's authorization server), or workload identity
 * (`jwt_bearer`: the workload's JWT, `assertionFile` or `assertion`, becomes an access token). */
export type OAuthGrant =
  | 'authorization_code'
  | 'client_credentials'
  | 'enterprise_managed'
  | 'jwt_bearer';
export type Scope = 'user' | 'local';
/** Which tools clients of a served pool see: every tool (`direct`), the search tools
 * `search_tools`, `describe_tools` and `call_tool` (`search`), or every tool up to `autoLimit`
 * and the search tools past it (`auto`). */
export type ServeMode = 'direct' | 'search' | 'auto';
/** Whether the clients of a served pool share a server (`shared`, the default), or each gets a
 * connection (for a stdio server, a process) of its own (`perClient`): for servers that keep
 * state for their client, such as a browser, a REPL or a signed-in session. */
export type SessionScope = 'shared' | 'perClient';
/** Where a server listed a skill. */
export type SkillSource = 'skills/list' | 'resources';
export type TransportType = 'stdio' | 'websocket' | 'http' | 'sse';
// @end

/** Connection settings: `command`/`args`/`env`/`cwd` for stdio, `url`/`headers` otherwise. */
export interface ServerConfig {
  // @generated ServerConfig
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** For `stdio`: start the server with this process's whole environment (never mcpmux's own
   * secrets) instead of only HOME, PATH, the locale and the like; `env` is added either way. */
  inheritEnv?: boolean;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** For `http`: never fall back to the legacy HTTP+SSE transport. */
  strictTransport?: boolean;
  /** OAuth for a remote server. Optional: a server answering 401 is authorized anyway, with
   * dynamic client registration. */
  oauth?: OAuthSettings;
  /** For stdio: run the server in a sandbox that grants it only what this says. */
  sandbox?: Sandbox;
  // @end
}


/** A server's OAuth settings (`config.oauth`); all optional. */
export interface OAuthSettings {
  // @generated OAuthSettings
  /** A client registered beforehand with the authorization server. */
  clientId?: string;
  clientSecret?: string;
  /** An HTTPS URL of this client's metadata document, used as its client id where the
   * authorization server supports it. */
  clientMetadataUrl?: string;
  /** Scopes to ask for; without them the server's challenge or metadata decides. */
  scopes?: string[];
  /** Default `'authorization_code'`. */
  grant?: OAuthGrant;
  /** For `client_credentials` with `private_key_jwt`: the PEM key that signs assertions. */
  privateKeyPem?: string;
  /** `'RS256'` (default), `'ES256'`, ... */
  signingAlgorithm?: string;
  /** For `enterprise_managed`: the enterprise identity provider. */
  idp?: IdpSettings;
  /** DPoP (tokens bound to a key this client holds): used whenever the server's
   * authorization server offers it, unless `false`. */
  dpop?: boolean;
  /** For `jwt_bearer`: the workload's JWT itself (a secret; short-lived). */
  assertion?: string;
  /** For `jwt_bearer`: a file holding the workload's JWT, read each time a token is needed
   * (platforms rotate it), e.g. a Kubernetes projected service account token. */
  assertionFile?: string;
  // @end
}

/** The enterprise identity provider of the `enterprise_managed` grant (`oauth.idp`). */
export interface IdpSettings {
  // @generated IdpSettings
  /** Its issuer identifier, exactly as in its metadata and ID tokens. */
  issuer: string;
  /** Its token endpoint; read from the issuer's metadata when absent. */
  tokenEndpoint?: string;
  /** This client's registration there (the audience of the ID token). */
  clientId: string;
  clientSecret?: string;
  /** Default `'client_secret_basic'` with a secret, else `'none'`. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** The signed-in user's ID token from this provider (short-lived: update the server's
   * config with a new one when it expires). */
  idToken?: string;
  // @end
}


/** Per-server time limits in milliseconds; unset ones use the pool's. */
/** What a sandboxed stdio server may reach: the paths it may read and write (`~` is the home
 * folder), the network (`'none'`, the default, or `'all'`), and its memory and open files;
 * `required` refuses to start it where the kernel cannot keep all of it. What it needs to run
 * (its program, its runtime, the system's libraries) is found for it. */
export interface Sandbox {
  // @generated Sandbox
  /** The most memory the server's process may allocate, in MiB (its data segment: what it writes
   * to, not the address space a runtime reserves). */
  memoryMb?: number;
  /** Whether the server may use the network at all (default: none). */
  network?: Network;
  /** The most files and sockets the server's process may hold open at once. */
  openFiles?: number;
  /** Paths the server may read (a folder with everything under it); `~` is the home folder. */
  read?: string[];
  /** Refuse to start the server where the kernel cannot keep all of this sandbox, instead of
   * starting it with what the kernel can keep (and a warning). */
  required?: boolean;
  /** Paths the server may read and write (a folder with everything under it). */
  write?: string[];
  /** The most processes and threads the server may run at once, itself included. */
  processes?: number;
  // @end
}

export interface Timeouts {
  // @generated Timeouts
  connectMs?: number;
  requestMs?: number;
  /** Limits of some of the server's tools (by their own names), instead of `requestMs`. */
  tools?: Record<string, number>;
  // @end
}

/** One MCP server as stored in the config file. */
export interface ServerRecord {
  // @generated ServerRecord
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
  /** The least severe log messages asked of this server (else the pool's `logLevel`). */
  logLevel?: LogLevel;
  /** Absent: `shared`. */
  sessionScope?: SessionScope;
  /** For `perClient`: the most clients with a connection of their own at once (default 8). */
  maxClients?: number;
  /** The server's tools as they were when it was trusted, by name: a tool that changed since,
   * or is new, is asked about again. */
  trustedTools?: Record<string, TrustedTool>;
  /** Saved from another host's file and not yet approved by the user: nothing of it runs (no
   * process, no connection) until it is approved (`Pool::approve_server`). */
  pending?: boolean;
  // @end
}

/** A tool as its server was trusted with it. */
export interface TrustedTool {
  /** `sha256:` and the hex SHA-256 of its definition. */
  digest: string;
  /** Its description then. */
  description?: string;
}

/** What `addServer` takes: everything but `name` and `config` has a default. `type` is inferred
 * from `config` when absent. */
export interface ServerInput {
  // @generated ServerInput
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
  logLevel?: LogLevel;
  sessionScope?: SessionScope;
  maxClients?: number;
  /** Save it waiting for the user's approval (as an import does); an add the user typed is approved
   * by that act (the default). */
  pending?: boolean;
  // @end
}

/** A partial update; absent fields stay as they are. Unknown keys are errors. */
export interface ServerPatch {
  // @generated ServerPatch
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
  logLevel?: LogLevel;
  sessionScope?: SessionScope;
  maxClients?: number;
  /** `false` approves a server that waits for approval (see `Pool::approve_server`). */
  pending?: boolean;
  // @end
}

/** The outcome of one entry of `addJson`. */
export interface ImportResult {
  // @generated ImportResult
  name: string;
  success: boolean;
  record?: ServerRecord;
  error?: string;
  /** The server was saved before as this entry asks: nothing was added (an import run again). */
  alreadyThere: boolean;
  // @end
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
  // @generated ToolInfo
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
  /** Icons a host may show (`src`, `mimeType`, `sizes`, `theme`). */
  icons?: Array<Record<string, unknown>>;
  /** The server's `_meta` of the tool (extensions' data, e.g. an MCP App's `ui`). */
  _meta?: Record<string, unknown>;
  // @end
}

/** A server whose tools an answer lacks because they could not be listed, and why. */
export interface Unlisted {
  serverId: string;
  serverName: string;
  error: string;
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

/** One file of a skill, as its listing promises it: the size and digest its bytes must have. */
export interface SkillFile {
  // @generated SkillFile
  uri: string;
  /** `sha256:` and 64 hex digits. */
  digest: string;
  size: number;
  // @end
}

/**
 * A skill a server offers (the Skills extension), as `skills/list` gives it: no file of it has
 * been read. `frontmatter` holds every field of its `SKILL.md` front matter; `files` is null
 * when the server says they change (nothing can be checked).
 */
export interface SkillInfo {
  // @generated SkillInfo
  serverId: string;
  serverName: string;
  name: string;
  /** When an agent should load it. */
  description: string;
  /** The resource URI of its `SKILL.md`. */
  uri: string;
  frontmatter: Record<string, unknown>;
  files: SkillFile[] | null;
  /** `skills/list` (the Skills extension) or `resources` (a `skill://…/SKILL.md` resource of a
   * server without it, as FastMCP's skills provider serves them). */
  listedBy: SkillSource;
  // @end
}

/** A skill loaded for use: its `SKILL.md` checked against the listing. */
export interface LoadedSkill {
  // @generated LoadedSkill
  skill: SkillInfo;
  /** What `SKILL.md` says after its front matter. */
  instructions: string;
  // @end
}

/** A file of a skill, checked against the listing: `text`, or `blob` (base64) for a binary file. */
export interface SkillFileContents {
  // @generated SkillFileContents
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  // @end
}

/** The origins an MCP App view declares (`_meta.ui.csp`); only well-formed ones are kept. */
export interface AppCsp {
  // @generated AppCsp
  /** fetch, XHR and WebSocket (`connect-src`). */
  connectDomains: string[];
  /** Scripts, styles, images, fonts and media. */
  resourceDomains: string[];
  /** Nested frames (`frame-src`). */
  frameDomains: string[];
  /** The document's base URIs (`base-uri`). */
  baseUriDomains: string[];
  // @end
}

/** The browser features an MCP App view asks for; a host may grant them. */
export interface AppPermissions {
  // @generated AppPermissions
  camera: boolean;
  microphone: boolean;
  geolocation: boolean;
  clipboardWrite: boolean;
  // @end
}

/** An MCP App view ready to render (`Pool.appView`): load `html` in a sandboxed frame under
 * `contentSecurityPolicy`, with `allow` as the frame's `allow` attribute. */
export interface AppView {
  // @generated AppView
  /** The tool whose view this is. */
  toolId: string;
  serverId: string;
  serverName: string;
  /** The view's `ui://` URI. */
  resourceUri: string;
  /** One of the pool's `apps.mimeTypes`. */
  mimeType: string;
  html: string;
  csp: AppCsp;
  /** The view's declared origins and nothing else (the extension's restrictive default when
   * it declares none). */
  contentSecurityPolicy: string;
  permissions: AppPermissions;
  /** The frame's `allow` attribute (`''` when the view asks for nothing). */
  allow: string;
  prefersBorder?: boolean;
  /** A dedicated origin the view asks for (its format is the host's to check). */
  domain?: string;
  tool: ToolInfo;
  // @end
}

/** A JSON-RPC message between a view and its host. */
export type AppMessage = Record<string, unknown>;

/** What to do after handing a bridge one message from the view. */
export interface AppBridgeOutput {
  // @generated AppBridgeOutput
  /** Post these to the view, in order. */
  post: AppMessage[];
  /** A message only the host can act on, as the view sent it: `ui/open-link`, `ui/message`,
   * `ui/update-model-context`, `ui/request-display-mode` (post the reply, e.g.
   * `AppBridge.reply(id, result)`) or `ui/notifications/size-changed` (resize the frame). */
  host?: AppMessage;
  // @end
}

/**
 * The host's end of one rendered MCP App view (`Pool.appBridge`): pass each message the view
 * posts to `handle` and post back what comes out. It answers `ui/initialize`, tells the view
 * the tool's input and result once it is initialized, and sends its `tools/call` and
 * `resources/read` through `Pool.appCall` / `appReadResource`.
 */
export declare class AppBridge {
  private constructor();
  /** The view this bridge serves. */
  readonly view: AppView;
  handle(message: AppMessage): Promise<AppBridgeOutput>;
  /** The tool's arguments: the messages to post now (none before the view is initialized). */
  toolInput(args: Record<string, unknown>): AppMessage[];
  /** The tool's result: the messages to post now (after its input). */
  toolResult(result: CallToolResult): AppMessage[];
  /** The call did not finish: the messages to post now. */
  toolCancelled(reason: string): AppMessage[];
  /** `AppBridge.reply`, for a host that holds only the bridge. */
  reply(id: string | number, answer: Record<string, unknown> | Error): AppMessage;
  /** A reply to the view's request `id`: a result, or an Error whose message the view sees. */
  static reply(id: string | number, answer: Record<string, unknown> | Error): AppMessage;
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

export type ConnectionPhase =
  | 'transport'
  | 'handshake'
  | 'ready'
  | 'backoff'
  | 'closed'
  | 'lost'
  | 'unhealthy'
  | 'failed';

/** A server's connection, with what the server said of itself at its last connection
 * (known before connecting, from the catalog). */
export interface ServerStatus {
  // @generated ServerStatus
  id: string;
  name: string;
  state: ConnectionState;
  /** Why it is not connected: the last failure, kept while a reconnect waits its turn. */
  error?: string;
  /** Of the current connection, else of the last one. */
  protocolVersion?: string;
  /** Process id of a stdio server's child. */
  pid?: number;
  /** `name`, `version`, and `title`, `description`, `icons`, `websiteUrl` when given. */
  serverInfo?: Record<string, unknown>;
  /** How to use the server's tools, for a model's system prompt. */
  instructions?: string;
  /** What the server offers, as it said. */
  capabilities?: Record<string, unknown>;
  // @end
}

/** One progress update of a call. */
export interface Progress {
  progress: number;
  total?: number | null;
  message?: string | null;
}

/** What `complete` completes: one of `prompt` and `resource`. */
export interface CompletionRequest {
  prompt?: string;
  resource?: string;
  argument: string;
  /** What was typed so far. */
  value: string;
  /** The arguments already chosen, by name. */
  context?: Record<string, string>;
}
/** Completion values: at most 100, with the server's `total` and whether there are more. */
export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}
/** Options of the list calls (`listTools`, `listResources`, `listResourceTemplates`,
 * `listPrompts`). */
export interface ListOptions {
  /** Ask the servers again past every cache (the pool's tool lists, the cached answers of
   * servers whose lists carry a `ttlMs`). */
  refresh?: boolean;
}
export interface CallToolOptions {
  /** Aborting it cancels the call: the server gets `notifications/cancelled` and the promise
   * rejects with a `CancelledError`. */
  signal?: AbortSignal;
  /** Overrides the server's and the pool's request timeout; reset by progress. */
  timeoutMs?: number;
  /** Receives the call's progress notifications. */
  onProgress?: (progress: Progress) => void;
  /** `false` takes a result that does not match the tool's `outputSchema` as it is (else
   * such a result rejects with `InvalidResultError`). */
  validate?: boolean;
  /** Keys added to the request's `_meta` (a W3C `traceparent`, keys of your own). */
  meta?: Record<string, unknown>;
  /** Caps the whole call, however much progress the server reports. */
  maxTotalMs?: number;
  /** Told each status of the task the server runs the call as, if it does (see `startTask`). */
  onTask?: (update: TaskUpdate) => void;
}

/** A status of the task a server runs a tool call as (the tasks extension). */
export interface TaskUpdate {
  /** The server's id of the task. */
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
}

/** A tool call started with `Pool.startTask`, for a host that follows a long-running call. */
export interface TaskRun {
  /** The task's last status; null until the server announces one (and for a call answered at once). */
  readonly status: TaskUpdate | null;
  /** Resolves with the next status, or null once the call has ended. */
  changed(): Promise<TaskUpdate | null>;
  /** Cancels the call, and the task at the server: `result()` then rejects with `CancelledError`. */
  cancel(): void;
  /** The call's result, as `callTool` gives it. */
  result(): Promise<CallToolResult>;
}

// ---------------------------------------------------------------------------------------------
// Events (Elftia's names: the `type` of each event)
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
/** What running a server would do, for the user to approve: its exact command and arguments
 * (or URL), the names of what it is given (never the values), its sandbox. */
export interface Consent {
  // @generated Consent
  args?: string[];
  /** The program a stdio server runs, exactly as it would be started (no shell). */
  command?: string;
  cwd?: string;
  /** The names of the environment variables it is given (never their values). */
  envKeys?: string[];
  /** The names of the HTTP headers it is sent (never their values). */
  headerKeys?: string[];
  /** It starts with the host's whole environment (less mcpmux's own secrets). */
  inheritEnv?: boolean;
  /** The sandbox it would run in; none: the user's full rights. */
  sandbox?: Sandbox;
  serverId: string;
  serverName: string;
  /** A remote server's address, credentials in it redacted. */
  url?: string;
  // @end
}
/** A server was saved waiting for the user's approval (imported from another host's file):
 * show `consent`, then `approveServer` it (or remove it). */
export interface ServerPendingEvent {
  type: 'server:pending';
  serverId: string;
  serverName: string;
  consent: Consent;
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
/** The server's prompt list changed: list its prompts again. */
export interface PromptsChangedEvent {
  type: 'prompts:changed';
  serverId: string;
}
/** The server's resource list changed: list its resources again. */
export interface ResourcesChangedEvent {
  type: 'resources:changed';
  serverId: string;
}
export interface ResourceUpdatedEvent {
  type: 'resource:updated';
  serverId: string;
  uri: string;
}
/** A notification from a server that mcpmux has no meaning for (an extension's). */
export interface NotificationEvent {
  type: 'notification';
  serverId: string;
  method: string;
  params?: Record<string, unknown>;
}
/** The user finished what a URL elicitation asked (`UrlElicitationRequiredError`): the
 * request refused for it can be retried. */
export interface ElicitationCompleteEvent {
  type: 'elicitation:complete';
  serverId: string;
  elicitationId: string;
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

/** A widget was put on the canvas (`widget_display`). */
export interface WidgetEvent {
  type: 'widget';
  id: string;
  /** The recipe it was made from. */
  name: string;
  params: Record<string, unknown>;
}
/** An agent made a model request and got its answer (tokens are this turn's). */
export interface AgentTurnEvent {
  type: 'agent:turn';
  runId: string;
  iteration: number;
  inputTokens: number;
  outputTokens: number;
  /** How many tools the model asked for in this turn. */
  toolUses: number;
}
/** An agent is about to run a tool the model asked for. */
export interface AgentToolUseEvent {
  type: 'agent:tool_use';
  runId: string;
  callId: string;
  toolId: string;
  arguments: unknown;
}
/** A tool of an agent run answered (or was denied, or failed). */
export interface AgentToolResultEvent {
  type: 'agent:tool_result';
  runId: string;
  callId: string;
  toolId: string;
  isError: boolean;
  /** The first characters of the result as the model reads it. */
  preview: string;
}

/**
 * A server runs a tool call as a task (the tasks extension), and the pool follows it: sent when
 * the task is announced and whenever its status changes.
 */
export interface TaskStatusEvent {
  type: 'task:status';
  serverId: string;
  /** The tool's own name on its server. */
  toolName: string;
  /** The server's id of the task. */
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
}

/** Every event a pool emits, by name. */
export interface PoolEvents {
  'server:connected': ServerConnectedEvent;
  'connection:state': ConnectionStateEvent;
  'servers:changed': ServersChangedEvent;
  'server:pending': ServerPendingEvent;
  'tool:called': ToolCalledEvent;
  'tools:changed': ToolsChangedEvent;
  'prompts:changed': PromptsChangedEvent;
  'resources:changed': ResourcesChangedEvent;
  'resource:updated': ResourceUpdatedEvent;
  'elicitation:complete': ElicitationCompleteEvent;
  notification: NotificationEvent;
  progress: ProgressEvent;
  log: LogEvent;
  widget: WidgetEvent;
  'agent:turn': AgentTurnEvent;
  'agent:tool_use': AgentToolUseEvent;
  'agent:tool_result': AgentToolResultEvent;
  'task:status': TaskStatusEvent;
  /** Every event, whatever its type. */
  event: PoolEvent;
}

export type PoolEvent =
  | ServerConnectedEvent
  | ConnectionStateEvent
  | ServersChangedEvent
  | ServerPendingEvent
  | ToolCalledEvent
  | ToolsChangedEvent
  | PromptsChangedEvent
  | ResourcesChangedEvent
  | ResourceUpdatedEvent
  | ElicitationCompleteEvent
  | NotificationEvent
  | ProgressEvent
  | LogEvent
  | WidgetEvent
  | AgentTurnEvent
  | AgentToolUseEvent
  | AgentToolResultEvent
  | TaskStatusEvent;
export type PoolEventName = keyof PoolEvents;
/** The name of an event the core emits (every `PoolEvent['type']`). */
export type CoreEventName = PoolEvent['type'];
/** Every event name the core emits, from the core itself. */
export declare const EVENT_NAMES: readonly CoreEventName[];
/** The package's version (package.json), which its native addon was checked to share. */
export declare const version: string;

// ---------------------------------------------------------------------------------------------
// Host tools, host requests, recipes, the canvas
// ---------------------------------------------------------------------------------------------

/** What a host tool's function may return: text, a JSON value (sent as JSON text; an object
 * is also the `structuredContent`), a full `CallToolResult`, or nothing. */
export type HostToolReturn = string | CallToolResult | Record<string, unknown> | unknown[] | number | boolean | null | undefined;

/** A function of the application offered as a tool. */
export interface HostTool<Args extends Record<string, unknown> = Record<string, any>> {
  /** Also its id: 1 to 64 characters of `[A-Za-z0-9_-]`, not starting with `mcp__`. */
  name: string;
  description?: string;
  /** A JSON Schema of `type: "object"`; arguments are checked against it before `handler`
   * runs. Default: any object. */
  inputSchema?: Record<string, unknown>;
  /** Sync or async; what it throws becomes an `isError` result with the message. `signal`
   * aborts when the call is cancelled. */
  handler: (args: Args, context: { signal: AbortSignal }) => HostToolReturn | Promise<HostToolReturn>;
}

/** A root the host offers servers. */
export interface Root {
  uri: string;
  name?: string;
  [key: string]: unknown;
}

/** A request from a server, with the server it came from. */
export interface HostRequest<P> {
  serverId: string;
  serverName: string;
  params: P;
}

/** A message of a sampling request. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  content: ContentBlock | ContentBlock[];
  [key: string]: unknown;
}

/** `sampling/createMessage` parameters. */
export interface CreateMessageParams {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  modelPreferences?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The answer to a sampling request. */
export interface CreateMessageResult {
  role: 'assistant';
  content: ContentBlock;
  model: string;
  stopReason?: string;
  [key: string]: unknown;
}

/** `elicitation/create` parameters: a form (`requestedSchema`) or a URL to open. */
export interface ElicitParams {
  mode?: 'form' | 'url';
  message: string;
  requestedSchema?: Record<string, unknown>;
  url?: string;
  [key: string]: unknown;
}

/** The answer to an elicitation request. */
export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Answers sampling; a string is the reply's text. Throwing refuses with the message. */
export type SamplingHandler = (
  request: HostRequest<CreateMessageParams>,
  context: { signal: AbortSignal },
) => CreateMessageResult | string | Promise<CreateMessageResult | string>;

/** Answers elicitation: an `ElicitResult`, or the content to accept, or `null` to decline.
 * Throwing refuses with the message. */
export type ElicitationHandler = (
  request: HostRequest<ElicitParams>,
  context: { signal: AbortSignal },
) => ElicitResult | Record<string, unknown> | null | undefined | Promise<ElicitResult | Record<string, unknown> | null | undefined>;

/** A root, or just its URI. */
export type RootSpec = Root | string;

/** What a roots handler is asked: the roots of this server. */
export interface RootsRequest {
  serverId: string;
  serverName: string;
  /** `roots/list` has no parameters: always `{}` (the shape of every host request). */
  params: Record<string, never>;
}

/** Answers a server's `roots/list`, asked each time. Throwing answers the server with an
 * error carrying the message. */
export type RootsHandler = (
  request: RootsRequest,
  context: { signal: AbortSignal },
) => RootSpec[] | null | Promise<RootSpec[] | null>;

/** What an OAuth handler is asked: send the user to `authorizationUrl`. */
export interface AuthorizationPrompt {
  serverId: string;
  serverName: string;
  authorizationUrl: string;
  redirectUri: string;
}

/** Takes a user through authorization and resolves to the URL the authorization server
 * redirected to (with its `code` and `state`). Throwing fails the connection with the message. */
export type OAuthHandler = (
  prompt: AuthorizationPrompt,
  context: { signal: AbortSignal },
) => string | URL | Promise<string | URL>;

export interface OAuthHandlerOptions {
  /** The redirect URI registered with the authorization server (where it sends the user back). */
  redirectUri: string;
}

/** Keeps each server's OAuth credentials: an opaque JSON document per server id. The
 * credentials are secrets: never log them. Methods may be sync or async; a throw fails the
 * operation with the message. */
export interface TokenStore {
  /** What `save` got for this server, or `null`/`undefined`. */
  load(serverId: string): unknown | Promise<unknown>;
  save(serverId: string, credentials: unknown): void | Promise<void>;
  clear(serverId: string): void | Promise<void>;
}

/** A `TokenStore`, a JSON file (mode 0600), memory only, or `null` for the default
 * (`<configPath>.tokens.json`). */
export type TokenStoreSpec = TokenStore | { file: string } | 'memory' | null;

/** A recipe: markdown whose front matter names a widget and the JSON Schema of its params. */
export interface Recipe {
  name: string;
  description: string;
  schema?: Record<string, unknown>;
  /** The instructions after the front matter. */
  body: string;
}

export interface RecipeSummary {
  name: string;
  description: string;
  /** Present in search results. */
  score?: number;
}

/** One widget on the canvas. */
export interface Widget {
  id: string;
  /** The recipe it was made from. */
  kind: string;
  params: Record<string, unknown>;
  position?: unknown;
  size?: unknown;
  style?: unknown;
}

export interface CanvasDocument {
  version: number;
  widgets: Widget[];
}

/** A change of the canvas, as `onCanvas` listeners get it. */
export type CanvasChange =
  | { change: 'added'; widget: Widget }
  | { change: 'updated'; widget: Widget }
  | { change: 'removed'; id: string }
  | { change: 'cleared' };

// ---------------------------------------------------------------------------------------------
// Conversations and the agent
// ---------------------------------------------------------------------------------------------

/** Which servers a conversation or run uses, by id or name (`local` for host tools): only
 * `enabled` ones when given, never `disabled` ones. Unknown keys are errors. */
export interface ServerFilter {
  enabled?: string[];
  disabled?: string[];
}

/** A tool as offered to a model. */
export interface ToolDef {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What one agent conversation may call: discovery tools first, then the tools of every
 * server it used (activation lasts as long as the conversation). */
export declare class Conversation {
  private constructor();
  /** The function definitions to offer a model now. */
  tools(): ToolDef[];
  /** Ids of the servers activated so far. */
  activated(): string[];
  /** Calls a function by the name `tools()` gave. */
  call(
    name: string,
    args?: Record<string, unknown> | null,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<CallToolResult>;
}

/** An image, base64. */
export interface Image {
  data: string;
  mimeType: string;
}

/** A piece of a message (Anthropic-style content blocks). */
export type Block =
  | { type: 'text'; text: string }
  | ({ type: 'image' } & Image)
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean; images?: Image[] };

/** One message of a transcript. */
export interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** A request to a JS provider. */
export interface ChatRequest {
  model: string;
  messages: Message[];
  tools: ToolDef[];
  system?: string;
  maxTokens?: number;
  temperature?: number;
}

/** A JS provider's answer. `stopReason` and `usage` are optional. A plain string is a text
 * answer. */
export interface ChatResponse {
  content: Array<
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  >;
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens';
  usage?: Usage;
}

/** A provider implemented in JS. `chat` may stream text through `onToken`; `signal` aborts
 * when the run is cancelled. What it throws fails the run (`ConnectionError`). */
export interface JsProvider {
  /** For logs and events; default `"js"`. */
  name?: string;
  /** Sent as `request.model`; `agent.setModel()` changes it. */
  model?: string;
  chat(
    request: ChatRequest,
    context: { onToken: (text: string) => void; signal: AbortSignal },
  ): ChatResponse | string | Promise<ChatResponse | string>;
}

/** A provider described as data. */
export type ProviderConfig =
  | { type: 'openai'; model: string; baseUrl?: string; apiKey?: string; headers?: Record<string, string> }
  | { type: 'remote'; model: string; proxyUrl: string }
  | { type: 'anthropic'; model: string; baseUrl?: string; apiKey?: string }
  | { type: 'ollama'; model: string; baseUrl?: string };

/** How an agent behaves; every field optional, unknown keys are errors. */
export interface AgentOptions {
  /** Model requests per run before it stops with `max_iterations`. Default 10. */
  maxIterations?: number;
  /** The host's own instructions, added to the system prompt. */
  instructions?: string;
  maxTokens?: number;
  temperature?: number;
  /** Tool results of the last this-many turns are always sent whole. Default 2. */
  keepRecentTurns?: number;
  /** Older results longer than this are cut to a preview with a `recall(id)` hint. Default 2000. */
  compressOverChars?: number;
  previewChars?: number;
  /** Estimated tokens the transcript may take. Default 100000. */
  contextBudgetTokens?: number;
  /** The most of each server's `instructions` the system prompt takes (cut with a marker);
   * 0 leaves them out. Default 2000. */
  serverInstructionsChars?: number;
  /** Which tools `approve` is asked about: `'trusted'` (default: untrusted servers' tools,
   * tools in `disabledAutoApproveTools`, tools that say they destroy), `'read_only'` (only
   * trusted servers' read-only tools run unasked), `'always'`. */
  approvalPolicy?: 'trusted' | 'read_only' | 'always';
  /** `false`: under `'trusted'`, tools that say they destroy run without asking. Default true. */
  askDestructive?: boolean;
  /** How long a tool call may go without progress (default: the server's, or the pool's). */
  toolTimeoutMs?: number;
  /** The most a tool call may take in all, however much progress it reports. */
  toolMaxTotalMs?: number;
}

/** What the approval callback is asked about. */
export interface ApprovalRequest {
  // @generated ApprovalRequest
  /** The tool's id, or `'sampling/createMessage'` for `handleSampling`. */
  toolId: string;
  serverName: string;
  arguments: unknown;
  serverId?: string;
  /** What to show the user about the tool. */
  title?: string;
  description?: string;
  /** Hints from the server (`readOnlyHint`, `destructiveHint`, ...); an untrusted server's
   * may be wrong. */
  annotations?: Record<string, unknown>;
  /** Whether the user marked the tool's server trusted. */
  trusted: boolean;
  /** Why the policy asks: `changed_since_trusted` / `new_since_trusted` for a tool of a
   * trusted server that is not what the user trusted (see `change`). */
  reason?: ApprovalReason;
  /** For a tool of a trusted server that changed or is new since it was trusted: what is not
   * as the user saw it (the description before and now). */
  change?: string;
  // @end
}

/** `true` / `'once'`: run it; `'always'`: for the rest of this agent's life; `false` /
 * `'deny'`: the model is told it was denied. */
export type Approval = 'once' | 'always' | 'deny' | boolean;

export type ApproveFn = (request: ApprovalRequest) => Approval | Promise<Approval>;

/** A resource whose contents go with the prompt. */
export interface Attachment {
  /** The server's id or name. */
  server: string;
  uri: string;
}

export interface RunOptions {
  /** Earlier messages (a previous result's `transcript`). */
  history?: Message[];
  attachments?: Attachment[];
  servers?: ServerFilter;
  /** Streamed text of the model's answers. */
  onToken?: (text: string) => void;
  /** Asked before tools of untrusted servers (or in `disabledAutoApproveTools`) run; without
   * it they are denied. A throw denies. */
  approve?: ApproveFn;
  /** Aborting ends the run with `stop: 'cancelled'`. */
  signal?: AbortSignal;
}

/** The outcome of a run. */
export interface AgentResult {
  text: string;
  transcript: Message[];
  usage: Usage;
  stop: 'finished' | 'max_iterations' | 'cancelled';
  iterations: number;
}

/**
 * An agent over a pool's tools and one provider. The loop, approval, compression and
 * providers all live in the Rust core.
 */
export declare class Agent {
  constructor(pool: Pool, provider: ProviderConfig | JsProvider, options?: AgentOptions);
  constructor(pool: Pool, options: AgentOptions & { provider: ProviderConfig | JsProvider });
  /** The provider's current model. */
  readonly model: string;
  /** The provider's name. */
  readonly providerName: string;
  setModel(model: string): void;
  /** The system prompt the next run sends. */
  systemPrompt(): string;
  /** Runs the loop for one prompt. */
  run(prompt: string, options?: RunOptions): Promise<AgentResult>;
  /** Answers the pool's sampling requests with this agent's provider, tools included (a
   * request's tools go to the model, its tool calls back to the server), asking `approve`
   * first when given. Servers learn about sampling when they connect: call it before. */
  handleSampling(options?: { approve?: ApproveFn }): void;
}

// ---------------------------------------------------------------------------------------------
// Serving a pool as one MCP server
// ---------------------------------------------------------------------------------------------

/** How `serveHttp` serves a pool (core's `HttpServeSettings`); every field is optional, an
 * unknown one is an `InvalidArgumentError`, as is a combination core refuses (the message
 * names the fix). */
export interface HttpServeSettings {
  // @generated HttpServeSettings
  /** Where to listen, an IP address and port (default `127.0.0.1:0`: loopback, any free port).
   * A host name such as `localhost` is refused. */
  addr?: string;
  /** The bearer token clients send (default: a new random one, `HttpServer.token`). */
  token?: string;
  /** No token at all; refused off loopback, and with `token`. */
  noAuth?: boolean;
  /** Browser origins allowed to call (e.g. `http://localhost:5173`); requests from any other
   * origin are refused. Requests without `Origin` (every non-browser client) pass. */
  allowedOrigins?: string[];
  /** Host names to answer to besides `localhost`, `127.0.0.1` and `::1`. */
  allowedHosts?: string[];
  /** Default `auto`. */
  mode?: ServeMode;
  /** The most tools `auto` lists before it shows the search tools (default 40). */
  autoLimit?: number;
  /** Characters the client puts before each tool name (Claude Code's `mcp__mcpmux__` is 13):
   * names are cut so that the whole stays within 64. Default 0. */
  nameBudget?: number;
  /** The `serverInfo.name` clients see (default `mcpmux`). */
  serverName?: string;
  /** A secret (16 characters or more) shared by replicas behind one load balancer, so that
   * any of them serves any session (default: sessions stay with this server). */
  sessionKey?: string;
  /** A file that gets one JSON line per tool call (time, client, profile, server, tool,
   * duration, outcome). */
  auditLog?: string;
  /** Also serve the HTTP+SSE transport of protocol 2024-11-05 (`GET /sse`, `POST
   * /messages`), for clients that predate Streamable HTTP. Default false. */
  legacySse?: boolean;
  /** Accept access tokens an OAuth authorization server issued, instead of one shared token
   * (with `token` or `noAuth` it is an error). `serveHttp` reads the issuer's metadata and
   * keys before it resolves: an issuer it cannot reach rejects with a `ConnectionError`. */
  oauth?: OAuthResourceSettings;
  /** The most connections served at once (default 512); past it, a request is answered 503. */
  maxConnections?: number;
  /** The most connections served at once from one address (default 256; on loopback every
   * local client has the same address). */
  maxConnectionsPerPeer?: number;
  // @end
}

/** OAuth resource-server mode of `serveHttp` (core's `OAuthResourceSettings`): clients find
 * the issuer in `/.well-known/oauth-protected-resource/mcp` (a 401 points there) and bring JWT
 * access tokens it issued for this server; bearer and DPoP-bound tokens are both taken. */
export interface OAuthResourceSettings {
  // @generated OAuthResourceSettings
  /** The authorization server's issuer identifier, exactly as in its metadata and tokens
   * (HTTPS, or HTTP on this machine). */
  issuer: string;
  /** This server's resource identifier, what tokens must be issued for (default
   * `http://HOST/mcp`, as the client reached the server; set it behind a proxy). */
  resource?: string;
  /** The audience tokens must name, when the issuer names this server otherwise than by its
   * resource URL (e.g. an Auth0 API identifier). */
  audience?: string;
  /** Scopes every token must carry; a token without them is answered 403. */
  scopes?: string[];
  /** The issuer's key set, for an issuer that publishes no metadata. */
  jwksUri?: string;
  // @end
}

/**
 * A pool served over Streamable HTTP, made by `pool.serveHttp()`. Clients reach every server
 * of the pool through it, under `SERVER__TOOL` names. Like a listening `http.Server`, it keeps
 * the process alive until `stop()` or the pool's `close()`, unless `unref()` is called; losing
 * every reference to it does not stop it.
 */
export declare class HttpServer {
  private constructor();
  /** The URL clients connect to, e.g. `http://127.0.0.1:39127/mcp`. */
  readonly url: string;
  /** The bearer token clients send (`Authorization: Bearer <token>`); `null` with `noAuth`
   * or `oauth`. */
  readonly token: string | null;
  /** Whether it still serves. */
  readonly listening: boolean;
  /** Keeps the process alive while it serves (the default). */
  ref(): this;
  /** Lets the process exit while it serves. */
  unref(): this;
  /** Stops accepting connections and ends open sessions; resolves once the port is closed.
   * Idempotent. */
  stop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------------

/**
 * A pool of MCP server connections over one config file. Servers connect on first use.
 * Events are delivered through a weak handle: an open pool never keeps the process alive
 * unless `ref()` is called (or a server `serveHttp` started listens: see `HttpServer`).
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
  /**
   * Adds a server. One already saved under its name as given is answered as it is, with the
   * fields the input leaves out as they are saved (a host can add it at every start, after
   * its user disabled or trusted it); one that differs in what the input names rejects with
   * `InvalidArgumentError` naming the fields that differ.
   */
  addServer(input: ServerInput): Promise<ServerRecord>;
  /** Imports servers from JSON in the usual `mcpServers` formats, or a single server. */
  addJson(json: string | Record<string, unknown>): Promise<ImportResult[]>;
  updateServer(idOrName: string, patch: ServerPatch): Promise<ServerRecord>;
  /** Approves a server imported from another host's file (`pending`): it may run from now on,
   * and is connected and listed. Show the user its `server:pending` event's `consent` first. */
  approveServer(idOrName: string): Promise<ServerRecord>;
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

  /** Tools of every active server, or of one. With `refresh`, the servers are asked again
   * past every cache (for a server that changed its tools without saying so); the caches then
   * hold the new lists. */
  listTools(server?: string | null, options?: ListOptions): Promise<ToolInfo[]>;
  /** Ranked tools for `query` (names, titles, descriptions, parameter names), best first.
   * A server whose tools are not known for its current config (never listed, or its config
   * changed) is listed first (see `ensureCatalog`); servers whose tools are known are not
   * started. `limit` defaults to 10. */
  searchTools(query: string, options?: { limit?: number }): Promise<SearchHit[]>;
  /** Every tool known without connecting anything (live lists, else the last known ones). */
  knownTools(): Promise<ToolInfo[]>;
  /** Lists, once, every active server (or those `servers` lets through) whose tools the
   * catalog does not know for its current config, concurrently, each within its connect
   * timeout. Resolves with the servers that could not be listed, and why. */
  ensureCatalog(options?: { servers?: ServerFilter }): Promise<Unlisted[]>;
  /** Calls a tool by its pool id (`ToolInfo.id`). */
  callTool(
    toolId: string,
    args?: Record<string, unknown> | null,
    options?: CallToolOptions,
  ): Promise<CallToolResult>;
  /**
   * Starts a tool call in the background and gives a `TaskRun` to follow it: for tools that run
   * long (a server's tasks), where the host shows the status as it changes and lets the user
   * cancel. `options` are `callTool`'s (`onTask` is the run's own).
   */
  startTask(toolId: string, args?: Record<string, unknown> | null, options?: Omit<CallToolOptions, 'onTask'>): TaskRun;

  listResources(server?: string | null, options?: ListOptions): Promise<ResourceInfo[]>;
  listResourceTemplates(server?: string | null, options?: ListOptions): Promise<ResourceTemplateInfo[]>;
  readResource(server: string, uri: string): Promise<ReadResourceResult>;
  /**
   * The MCP App view of a tool (`_meta.ui.resourceUri`), read from its server and checked,
   * with the policy to load it under. Needs the pool option `apps`; a tool without a view
   * rejects with `InvalidArgumentError`.
   */
  appView(toolId: string): Promise<AppView>;
  /**
   * A call the view makes: `name` is the tool's own name on the view's server (a view reaches
   * no other), and the tool must be visible to apps (`_meta.ui.visibility`), else
   * `InvalidArgumentError` / `NotFoundError`.
   */
  appCall(view: AppView, name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** A resource the view reads, from its own server. */
  appReadResource(view: AppView, uri: string): Promise<ReadResourceResult>;
  /** The bridge of a view being rendered; `hostContext` is what views learn of the host in
   * `ui/initialize` (`theme`, `displayMode`, `containerDimensions`, `locale`, ...). */
  appBridge(view: AppView, hostContext?: Record<string, unknown>): AppBridge;
  /**
   * The skills of one server, or of every server that offers any (the Skills extension),
   * without reading a file of them. The pool keeps this listing: loads and reads are checked
   * against it, so list again to take a server's changes.
   */
  listSkills(server?: string | null): Promise<SkillInfo[]>;
  /**
   * Loads a skill by its name (or its `SKILL.md` URI): its instructions, once the file's size,
   * digest and front matter are the listing's. A mismatch rejects with `ProtocolError` saying
   * what differs; an unknown skill with `NotFoundError`.
   */
  loadSkill(server: string, skill: string): Promise<LoadedSkill>;
  /** Reads one file of a skill (a URI its listing names), checked like `loadSkill`. */
  readSkillFile(server: string, skill: string, uri: string): Promise<SkillFileContents>;
  /**
   * Changes arrive as `resource:updated` events; the subscription holds over reconnects until
   * `unsubscribeResource`. Rejects with `ProtocolError` (naming the resource) when the server
   * refuses it.
   */
  subscribeResource(server: string, uri: string): Promise<void>;
  unsubscribeResource(server: string, uri: string): Promise<void>;

  listPrompts(server?: string | null, options?: ListOptions): Promise<PromptInfo[]>;
  /** Completion values for `argument` of a `prompt` (its name) or of a `resource` template
   * (its URI template), given what was typed so far (`value`) and the arguments already
   * chosen (`context`). Rejects with `ProtocolError` for a server without completions. */
  complete(server: string, request: CompletionRequest): Promise<Completion>;
  /** Sends the request `method` (one mcpmux has no method for, e.g. an extension's) to one
   * server; resolves with its result. An error the server answers is a `ProtocolError`. */
  request(server: string, method: string, params?: Record<string, unknown> | null): Promise<unknown>;
  /** Sends the notification `method` to one server. Notifications a server sends that mcpmux
   * has no meaning for arrive as `notification` events. */
  notify(server: string, method: string, params?: Record<string, unknown> | null): Promise<void>;
  getPrompt(server: string, name: string, args?: Record<string, string> | null): Promise<GetPromptResult>;

  /** Offers a JS function as a tool (server `local`, id = name); replaces one of the same
   * name. Throws `InvalidArgumentError` for a bad name or schema. */
  registerTool<Args extends Record<string, unknown> = Record<string, any>>(tool: HostTool<Args>): ToolInfo;
  /** Removes a host tool; whether it existed. */
  unregisterTool(name: string): boolean;

  /** Answers servers' sampling requests; `null` refuses them. With `tools`, the handler takes
   * the request's `tools` and `toolChoice` and may answer `tool_use` content (servers send
   * tools only to such a handler). Set it before connecting. */
  setSamplingHandler(handler: SamplingHandler | null, options?: { tools?: boolean }): void;
  /** Answers servers' elicitation requests; `null` declines them. Set it before connecting. */
  setElicitationHandler(handler: ElicitationHandler | null): void;
  /** Takes users through OAuth authorization of HTTP servers; `null` restores the default
   * (the system browser and a one-shot listener on 127.0.0.1). */
  setOAuthHandler(authorize: OAuthHandler, options: OAuthHandlerOptions): void;
  setOAuthHandler(authorize: null): void;
  /** Where OAuth tokens live (default: `<configPath>.tokens.json`, mode 0600). */
  setTokenStore(store: TokenStoreSpec): void;
  /** Forgets a server's OAuth tokens and disconnects it: its next use authorizes again. */
  logout(idOrName: string): Promise<void>;
  /** The roots every server sees unless it has its own. */
  roots(): Root[];
  /** Replaces the pool's roots (objects or URI strings); connected servers are told. */
  setRoots(roots: RootSpec[]): Promise<void>;
  /** Gives one server its own roots; `null` returns it to the pool's. */
  setServerRoots(idOrName: string, roots: RootSpec[] | null): Promise<void>;
  /** Answers servers' `roots/list` with a function, asked each time (the server's id and
   * name are given); `null` restores the lists of `setRoots` / `setServerRoots`. */
  setRootsHandler(handler: RootsHandler | null): void;
  /** Tells every connected server that the roots changed: they ask again. */
  notifyRootsChanged(): Promise<void>;

  /** Adds a recipe (markdown with YAML front matter: `widget`, `description`, `schema`); also
   * offers the host tools `widget_display` and `canvas`. */
  registerRecipe(markdown: string): Recipe;
  listRecipes(): RecipeSummary[];
  /** A recipe in full, or `null`. */
  getRecipe(name: string): Recipe | null;
  searchRecipes(query: string, options?: { limit?: number }): RecipeSummary[];
  /** The canvas document. */
  canvas(): CanvasDocument;
  /** Calls `listener` after every change of the canvas; returns a function that unsubscribes.
   * Closing the pool ends every subscription. Throws `ShuttingDownError` once closed. */
  onCanvas(listener: (change: CanvasChange) => void): () => void;

  /** A conversation with discovery tools and lazy activation. */
  conversation(options?: { servers?: ServerFilter }): Conversation;
  /** `new Agent(pool, provider, options)`. */
  agent(provider: ProviderConfig | JsProvider, options?: AgentOptions): Agent;

  /** Serves the pool as one MCP server over Streamable HTTP (as `mcpmux serve --http` does),
   * on loopback with a new bearer token by default. Rejects with `InvalidArgumentError` for
   * bad settings, `IoError` when the address cannot be listened on, `ShuttingDownError` once
   * the pool is closed. `close()` stops the servers. */
  serveHttp(settings?: HttpServeSettings): Promise<HttpServer>;

  /** Keeps the process alive while the pool is open. */
  ref(): this;
  /** Undoes `ref()` (the default). */
  unref(): this;
  /** Stops the servers `serveHttp` started, refuses new calls, lets calls in flight finish (up
   * to `shutdownTimeoutMs`), then closes every connection. Idempotent. */
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
  | 'message_too_large'
  | 'shutting_down'
  | 'io'
  | 'url_elicitation_required'
  | 'invalid_result';

/** Options of an error: `ErrorOptions` and what the error carries (`data`). */
export interface McpmuxErrorOptions extends ErrorOptions {
  data?: unknown;
}
/** Base class of every error mcpmux throws. */
export declare class McpmuxError extends Error {
  constructor(message: string, code: ErrorCode | string, options?: McpmuxErrorOptions);
  readonly code: ErrorCode | string;
  /** What the error carries besides its message, for the kinds that carry something. */
  readonly data?: unknown;
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
/** A server sent a message larger than the pool accepts; raise `maxMessageBytes` (16 MiB by
 * default) to accept it. Its connection was closed and reopens on next use. */
export declare class MessageTooLargeError extends McpmuxError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: 'message_too_large';
  static readonly code: 'message_too_large';
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
/** A tool's result does not match the tool's `outputSchema` (its `structuredContent` is
 * missing or does not validate); `problems` says what is wrong, each led by the JSON pointer of
 * the value at fault. The call option `validate: false` takes such results as they are. */
export declare class InvalidResultError extends McpmuxError {
  constructor(message: string, options?: McpmuxErrorOptions);
  readonly code: 'invalid_result';
  static readonly code: 'invalid_result';
  readonly data: { problems: string[] };
  readonly problems: string[];
}
/** A URL a server asks the user to open. */
export interface UrlElicitation {
  /** Named by the `elicitation:complete` event when the user is done. */
  elicitationId: string;
  url: string;
  /** Why the server asks, to show the user. */
  message: string;
}
/** A server needs the user to open a URL first (URL mode elicitation, error -32042), e.g. to
 * connect an account: show each of `elicitations`, open its `url` if the user agrees, and
 * retry once the `elicitation:complete` event names its `elicitationId`. */
export declare class UrlElicitationRequiredError extends McpmuxError {
  constructor(message: string, options?: McpmuxErrorOptions);
  readonly code: 'url_elicitation_required';
  static readonly code: 'url_elicitation_required';
  readonly data: { elicitations: UrlElicitation[] };
  readonly elicitations: UrlElicitation[];
}
