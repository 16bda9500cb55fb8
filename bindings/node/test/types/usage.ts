// Compiled with `tsc --strict --noEmit` only: it checks that index.d.ts describes the API the
// way a TypeScript user writes against it (self-reference through package.json "exports").
import {
  Pool,
  AppBridge,
  type AppBridgeOutput,
  type AppMessage,
  type AppView,
  McpmuxError,
  CancelledError,
  NotFoundError,
  type CallToolResult,
  type CanvasChange,
  type ConnectionStateEvent,
  type ErrorCode,
  type PoolOptions,
  type SearchHit,
  type ServerRecord,
  type ToolInfo,
  type SkillInfo,
  type LoadedSkill,
  type SkillFileContents,
  type AuthorizationPrompt,
  type OAuthSettings,
  type TokenStore,
  Agent,
  Conversation,
  EVENT_NAMES,
  type AgentResult,
  type AgentToolUseEvent,
  type ChatRequest,
  type CoreEventName,
  type JsProvider,
  type Recipe,
  version,
  type Root,
  HttpServer,
  type HttpServeSettings,
  type OAuthResourceSettings,
  type SessionScope,
  type ServeMode,
} from 'mcpmux';

async function main(): Promise<void> {
  const options: PoolOptions = { configPath: '/tmp/mcpmux.json', requestTimeoutMs: 10_000 };
  const pool: Pool = await Pool.open(options);

  pool.on('connection:state', (e: ConnectionStateEvent) => {
    const state: 'disconnected' | 'connecting' | 'connected' | 'error' = e.state;
    console.log(e.serverName, state, e.phase, e.error ?? '');
  });
  pool.once('tool:called', (e) => console.log(e.toolId, e.durationMs.toFixed(0), e.success));
  const onLog = (e: { message: string }) => console.log(e.message);
  pool.on('log', onLog);
  pool.off('log', onLog);
  pool.on('event', (e) => console.log(e.type));
  pool.ref().unref();

  const rec: ServerRecord = await pool.addServer({ name: 'everything', config: { command: 'npx', args: ['x'] } });
  const id: string = rec.id;
  await pool.updateServer(id, { isActive: true, disabledTools: ['echo'] });
  const scope: SessionScope = 'perClient';
  await pool.updateServer(id, { sessionScope: scope, maxClients: 4 });
  console.log(rec.sessionScope ?? 'shared', rec.maxClients);
  const imported = await pool.addJson({ mcpServers: { time: { command: 'uvx', args: ['mcp-server-time'] } } });
  if (imported[0]?.success) console.log(imported[0].record?.name);
  const test = await pool.testServer('everything');
  console.log(test.success, test.tools.length, test.durationMs);
  const found = await pool.discover('everything');
  console.log(found.tools.map((t) => t.name), found.promptsError);

  const tools: ToolInfo[] = await pool.listTools();
  const hits: SearchHit[] = await pool.searchTools('add numbers', { limit: 3 });
  console.log(hits[0]?.id, hits[0]?.score.toFixed(2), (await pool.knownTools()).length);
  const controller = new AbortController();
  const result: CallToolResult = await pool.callTool(tools[0]!.id, { text: 'hi' }, {
    signal: controller.signal,
    timeoutMs: 5_000,
    onProgress: (p) => console.log(p.progress, p.total, p.message),
  });
  for (const block of result.content) if (block.type === 'text') console.log(block.text);
  console.log(result.isError === true, result.structuredContent);

  const resources = await pool.listResources('everything');
  const read = await pool.readResource('everything', resources[0]!.uri);
  console.log(read.contents[0]?.text);
  await pool.subscribeResource('everything', resources[0]!.uri);
  await pool.unsubscribeResource('everything', resources[0]!.uri);
  console.log((await pool.listResourceTemplates()).map((t) => t.uriTemplate));
  const skills: SkillInfo[] = await pool.listSkills();
  for (const skill of skills) console.log(skill.name, skill.description, skill.files?.map((f) => f.digest));
  const loaded: LoadedSkill = await pool.loadSkill('skills', 'pdf-forms');
  console.log(loaded.instructions, loaded.skill.frontmatter);
  const file: SkillFileContents = await pool.readSkillFile('skills', 'pdf-forms', loaded.skill.uri);
  console.log(file.text ?? file.blob);
  const prompt = await pool.getPrompt('everything', 'greet', { name: 'Ada' });
  console.log(prompt.messages[0]?.role, (await pool.listPrompts()).length);
  for (const s of pool.serverStates()) console.log(s.name, s.state, s.pid);
  await pool.removeServer(id);

  try {
    await pool.getServer('nope');
  } catch (err) {
    if (err instanceof NotFoundError) {
      const code: 'not_found' = err.code;
      console.log(code);
    } else if (err instanceof McpmuxError) {
      const code: ErrorCode | string = err.code;
      console.log(code, err.message);
    }
  }
  // Misuse the declarations must reject (tsc fails on an unused @ts-expect-error).
  // @ts-expect-error: tool ids are strings
  await pool.callTool(42);
  // @ts-expect-error: unknown pool option
  await Pool.open({ configPath: 'x', nope: 1 });
  // @ts-expect-error: the constructor is private; use Pool.open
  new Pool();
  pool.on('connection:state', (e) => {
    // @ts-expect-error: connection events have no toolId
    console.log(e.toolId);
  });
  // @ts-expect-error: AbortSignal, not a boolean
  await pool.callTool('x', {}, { signal: true });

  console.log(CancelledError.code, pool.configPath, pool.inFlight, pool.closed);
  await pool.close();
}

async function hostAndAgent(pool: Pool): Promise<void> {
  const names: readonly CoreEventName[] = EVENT_NAMES;
  console.log(names.includes('agent:turn'));
  pool.on('widget', (e) => console.log(e.id, e.name, e.params));
  pool.on('agent:tool_use', (e: AgentToolUseEvent) => console.log(e.runId, e.toolId, e.arguments));
  pool.on('agent:turn', (e) => console.log(e.iteration, e.inputTokens.toFixed(0), e.toolUses));
  pool.on('agent:tool_result', (e) => console.log(e.isError, e.preview.length));

  const info: ToolInfo = pool.registerTool<{ a: number; b: number }>({
    name: 'add',
    description: 'Add two numbers',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    handler: ({ a, b }) => String(a + b),
  });
  pool.registerTool({
    name: 'lookup',
    handler: async (args, { signal }) => {
      signal.throwIfAborted();
      return { found: args['key'] };
    },
  });
  console.log(info.serverName, pool.unregisterTool('add'));
  // @ts-expect-error: a host tool needs a handler
  pool.registerTool({ name: 'x' });

  pool.setSamplingHandler(async (req) => `${req.serverName}: ${req.params.messages.length}`);
  pool.setSamplingHandler((req) => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: req.params.systemPrompt ?? 'm' }));
  pool.setElicitationHandler(async (req) => (req.params.message ? { action: 'accept', content: { name: 'Ada' } } : null));
  pool.setElicitationHandler(() => ({ name: 'Ada' }));
  pool.setSamplingHandler(null);

  const oauth: OAuthSettings = { clientId: 'app', clientSecret: 's', scopes: ['read'], grant: 'client_credentials' };
  const enterprise: OAuthSettings = {
    grant: 'enterprise_managed',
    clientId: 'app',
    idp: { issuer: 'https://idp.example', clientId: 'idp-app', idToken: 'id-token' },
  };
  void enterprise;
  await pool.addServer({ name: 'remote', config: { url: 'https://mcp.example.com/mcp', strictTransport: true, oauth } });
  // @ts-expect-error: grant is one of three strings
  const badGrant: OAuthSettings = { grant: 'password' };
  console.log(badGrant);
  pool.setOAuthHandler(
    async (prompt: AuthorizationPrompt, { signal }) => {
      const res = await fetch(prompt.authorizationUrl, { redirect: 'manual', signal });
      return res.headers.get('location') ?? '';
    },
    { redirectUri: 'http://localhost:3000/callback' },
  );
  pool.setOAuthHandler((p) => new URL(p.redirectUri), { redirectUri: 'http://localhost/cb' });
  // @ts-expect-error: a handler needs its redirect URI
  pool.setOAuthHandler(async () => 'http://localhost/cb?code=1');
  pool.setOAuthHandler(null);
  const tokens = new Map<string, unknown>();
  const store: TokenStore = {
    load: (id) => tokens.get(id),
    save: async (id, credentials) => void tokens.set(id, credentials),
    clear: (id) => void tokens.delete(id),
  };
  pool.setTokenStore(store);
  pool.setTokenStore({ file: '/tmp/tokens.json' });
  pool.setTokenStore('memory');
  pool.setTokenStore(null);
  // @ts-expect-error: a store needs clear()
  pool.setTokenStore({ load: () => null, save: () => {} });
  await pool.logout('remote');
  const roots: Root[] = pool.roots();
  await pool.setRoots([...roots, { uri: 'file:///tmp', name: 'tmp' }]);
  await pool.setServerRoots('everything', null);
  await pool.setRoots(['file:///tmp/a', { uri: 'file:///tmp/b' }]);
  pool.setRootsHandler(({ serverId, serverName }, { signal }) =>
    signal.aborted ? [] : [`file:///srv/${serverName}`, { uri: `file:///id/${serverId}`, name: 'id' }],
  );
  pool.setRootsHandler(async () => [{ uri: 'file:///tmp' }]);
  pool.setRootsHandler(null);
  await pool.notifyRootsChanged();
  const unsubscribe: () => void = pool.onCanvas((c: CanvasChange) => {
    if (c.change === 'added' || c.change === 'updated') console.log(c.widget.kind);
    else if (c.change === 'removed') console.log(c.id);
  });
  unsubscribe();

  const recipe: Recipe = pool.registerRecipe('---\nwidget: card\n---\nbody');
  console.log(recipe.schema, pool.listRecipes()[0]?.name, pool.getRecipe('card')?.body);
  console.log(pool.searchRecipes('card', { limit: 2 })[0]?.score, pool.canvas().widgets[0]?.kind);

  const conv: Conversation = pool.conversation({ servers: { enabled: ['everything'] } });
  for (const def of conv.tools()) console.log(def.name, def.inputSchema);
  const r: CallToolResult = await conv.call('search_tools', { query: 'x' }, { signal: AbortSignal.timeout(1000) });
  console.log(r.content.length, conv.activated().join());

  const jsProvider: JsProvider = {
    name: 'mine',
    model: 'm1',
    async chat(request: ChatRequest, { onToken, signal }) {
      signal.throwIfAborted();
      onToken('hi');
      if (request.tools.length > 0) {
        return { content: [{ type: 'tool_use', id: '1', name: request.tools[0]!.name, input: {} }], stopReason: 'tool_use' };
      }
      return 'hi';
    },
  };
  const agent = new Agent(pool, jsProvider, { maxIterations: 4 });
  const remote = pool.agent({ type: 'openai', model: 'gpt-4o', apiKey: 'sk', baseUrl: 'http://127.0.0.1:1/v1' });
  const alsoAgent = new Agent(pool, { provider: { type: 'ollama', model: 'llama3' }, maxIterations: 2 });
  agent.setModel('m2');
  console.log(agent.model, agent.providerName, agent.systemPrompt().length, remote.model, alsoAgent.model);
  const controller = new AbortController();
  const result: AgentResult = await agent.run('hello', {
    history: [],
    attachments: [{ server: 'everything', uri: 'test://hello' }],
    servers: { disabled: ['local'] },
    onToken: (t) => process.stdout.write(t),
    approve: async (req) => (req.serverName === 'everything' ? 'always' : false),
    signal: controller.signal,
  });
  const stop: 'finished' | 'max_iterations' | 'cancelled' = result.stop;
  console.log(stop, result.text, result.usage.outputTokens, result.iterations, result.transcript.at(-1)?.role);
  const again = await agent.run('more', { history: result.transcript });
  console.log(again.text);
  agent.handleSampling({ approve: () => 'once' });
  // @ts-expect-error: unknown provider type
  new Agent(pool, { type: 'gemini', model: 'x' });
  // @ts-expect-error: approvals are 'once' | 'always' | 'deny' | boolean
  await agent.run('x', { approve: () => 'maybe' });
  // @ts-expect-error: unknown agent option
  new Agent(pool, jsProvider, { maxIterationz: 3 });
}

async function serving(pool: Pool): Promise<void> {
  const mode: ServeMode = 'search';
  const settings: HttpServeSettings = {
    addr: '127.0.0.1:8808',
    allowedOrigins: ['http://localhost:5173'],
    allowedHosts: ['mcp.internal'],
    mode,
    autoLimit: 20,
    nameBudget: 13,
    serverName: 'app',
  };
  const server: HttpServer = await pool.serveHttp(settings);
  const url: string = server.url;
  const token: string | null = server.token;
  console.log(url, token ?? 'no token', server.listening);
  server.unref().ref();
  await server.stop();
  const open = await pool.serveHttp();
  await (await pool.serveHttp({ noAuth: true })).stop();
  const oauth: OAuthResourceSettings = {
    issuer: 'https://auth.example.com',
    resource: 'https://mcp.example.com/mcp',
    scopes: ['mcp:tools'],
  };
  await (await pool.serveHttp({ oauth })).stop();
  // @ts-expect-error: the token may be null (noAuth)
  const bearer: string = open.token;
  console.log(bearer);
  // @ts-expect-error: the mode is direct, search or auto
  await pool.serveHttp({ mode: 'all' });
  // @ts-expect-error: unknown setting
  await pool.serveHttp({ port: 8808 });
  // @ts-expect-error: made by pool.serveHttp()
  new HttpServer();
}

void main();
void hostAndAgent;
void serving;
const release: string = version;
console.log(release);

// MCP Apps: a view, its calls and its bridge.
async function apps(pool: Pool): Promise<void> {
  const view: AppView = await pool.appView('mcp__clock__get-time');
  const policy: string = view.contentSecurityPolicy;
  const result: CallToolResult = await pool.appCall(view, 'get-time', {});
  const bridge: AppBridge = pool.appBridge(view, { theme: 'dark' });
  const out: AppBridgeOutput = await bridge.handle({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const posts: AppMessage[] = [...out.post, ...bridge.toolResult(result)];
  if (out.host) posts.push(AppBridge.reply(1, new Error(policy)));
}
void apps;
