// Compiled with `tsc --strict --noEmit` only: it checks that index.d.ts describes the API the
// way a TypeScript user writes against it (self-reference through package.json "exports").
import {
  Pool,
  McpmuxError,
  CancelledError,
  NotFoundError,
  type CallToolResult,
  type ConnectionStateEvent,
  type ErrorCode,
  type PoolOptions,
  type SearchHit,
  type ServerRecord,
  type ToolInfo,
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

void main();
