'use strict';
// Lists asked for again past every cache, a URL a server needs the user to open, and sampling
// with tools: against the real test server, in both protocol eras (2026-07-28 and --legacy).
const test = require('node:test');
const assert = require('node:assert/strict');

const { Pool, Agent, McpmuxError, UrlElicitationRequiredError, InvalidArgumentError, InvalidResultError } = require('mcpmux');
const { testOptions, testServerInput, everythingStdioInput, startFakeLlm, waitEvent } = require('./helpers');

const ERAS = [
  ['modern', []],
  ['legacy', ['--legacy']],
];

async function open(t) {
  const pool = await Pool.open(testOptions(t));
  t.after(() => pool.close());
  return pool;
}

const text = (result) => result.content[0].text;

test('a refresh lists what a server changed without saying', async (t) => {
  const pool = await open(t);
  // The server says its lists stay fresh for a minute (else each list asks it again).
  await pool.addServer(testServerInput('q', ['--tools-ttl-ms', '60000']));
  const before = (await pool.listTools('q')).map((tool) => tool.name);
  assert.equal((await pool.listResources('q')).length, 2);
  await pool.callTool('mcp__q__add_tool', { name: 'unannounced', quiet: true });
  assert.deepEqual((await pool.listTools('q')).map((tool) => tool.name), before);
  const cached = (await pool.listResources('q')).map((r) => r.uri);
  assert.ok(!cached.includes('test://added/unannounced'), String(cached));
  const fresh = (await pool.listResources('q', { refresh: true })).map((r) => r.uri);
  assert.ok(fresh.includes('test://added/unannounced'), String(fresh));
  const tools = await pool.listTools(null, { refresh: true });
  assert.ok(tools.some((tool) => tool.id === 'mcp__q__unannounced'));
  assert.ok((await pool.listPrompts('q', { refresh: true })).length > 0);
  assert.ok((await pool.listResourceTemplates(undefined, { refresh: false })).length > 0);
  await assert.rejects(pool.listTools('q', { refresh: 'yes' }), InvalidArgumentError);
});

for (const [era, args] of ERAS) {
  test(`a URL elicitation is an error with its URL, then an event (${era})`, async (t) => {
    const pool = await open(t);
    await pool.addServer(testServerInput(era, args));
    const completed = waitEvent(pool, 'elicitation:complete');
    const tool = `mcp__${era}__connect_account`;
    const url = 'https://example.test/connect?elicitation=connect-example-account';
    await assert.rejects(pool.callTool(tool), (err) => {
      assert.ok(err instanceof UrlElicitationRequiredError, String(err));
      assert.ok(err instanceof McpmuxError);
      assert.equal(err.code, 'url_elicitation_required');
      assert.deepEqual(err.elicitations, [
        { elicitationId: 'connect-example-account', url, message: 'Connect your example.test account.' },
      ]);
      assert.deepEqual(err.data, { elicitations: err.elicitations });
      assert.match(err.message, /example\.test\/connect/);
      return true;
    });
    const done = await completed;
    assert.equal(done.elicitationId, 'connect-example-account');
    assert.equal(text(await pool.callTool(tool)), 'account connected');
  });

  test(`sampling with tools reaches the model and its tool call the server (${era})`, async (t) => {
    const baseUrl = await startFakeLlm(t, [{ tools: [['get_weather', { city: 'Paris' }]] }]);
    const pool = await open(t);
    const agent = new Agent(pool, { type: 'openai', baseUrl, apiKey: 'k', model: 'm' });
    agent.handleSampling(); // before connecting: servers learn it when they connect
    await pool.addServer(testServerInput(era, args));
    const result = await pool.callTool(`mcp__${era}__sample_with_tools`);
    assert.equal(text(result), 'stop=toolUse tool_use:get_weather({"city":"Paris"})');
  });

  test(`a host sampling handler is sent tools only when it says it takes them (${era})`, async (t) => {
    const pool = await open(t);
    const asked = [];
    const handler = (request) => {
      asked.push(request);
      return {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'c1', name: request.params.tools[0].name, input: { city: 'Rome' } }],
        model: 'node-host',
        stopReason: 'toolUse',
      };
    };
    assert.throws(() => pool.setSamplingHandler(handler, { tools: 'yes' }), InvalidArgumentError);
    pool.setSamplingHandler(handler, { tools: true });
    await pool.addServer(testServerInput(era, args));
    const tool = `mcp__${era}__sample_with_tools`;
    assert.equal(text(await pool.callTool(tool)), 'stop=toolUse tool_use:get_weather({"city":"Rome"})');
    assert.deepEqual(asked[0].params.toolChoice, { mode: 'required' });

    pool.setSamplingHandler(handler); // no tools: servers must not send any
    await pool.disconnect(era);
    await assert.rejects(pool.callTool(tool), /sampling/);
    assert.equal(asked.length, 1);
  });
}

for (const [era, args] of ERAS) {
  test(`methods without a call go through by name (${era})`, async (t) => {
    const pool = await open(t);
    await pool.addServer(testServerInput(era, args));
    assert.deepEqual(await pool.request(era, 'test/echo', { x: 1 }), { method: 'test/echo', params: { x: 1 } });
    await assert.rejects(pool.request(era, 'test/nothing'), { code: 'protocol' });
    await assert.rejects(pool.request(era, ''), InvalidArgumentError);
    const pong = waitEvent(pool, 'notification');
    await pool.notify(era, 'test/ping', { y: 2 });
    const event = await pong;
    assert.equal(event.method, 'test/pong');
    assert.deepEqual(event.params, { y: 2 });
  });
}

test('prompt arguments complete, the second from the first', async (t) => {
  const pool = await open(t);
  await pool.addServer(everythingStdioInput());
  const prompt = 'completable-prompt';
  const departments = await pool.complete('everything', { prompt, argument: 'department', value: 'S' });
  assert.deepEqual(departments.values, ['Sales', 'Support']);
  const names = await pool.complete('everything', {
    prompt,
    argument: 'name',
    value: '',
    context: { department: 'Support' },
  });
  assert.deepEqual(names.values, ['John', 'Kim', 'Lee']);
  await assert.rejects(
    pool.complete('everything', { prompt, resource: 'x', argument: 'name', value: '' }),
    InvalidArgumentError,
  );
});

test('results are checked against the output schema; meta and maxTotalMs', async (t) => {
  const pool = await open(t);
  await pool.addServer(testServerInput('t'));
  await pool.listTools('t');
  assert.equal((await pool.callTool('mcp__t__structured')).structuredContent.answer, 42);
  await assert.rejects(pool.callTool('mcp__t__mismatch'), (err) => {
    assert.ok(err instanceof InvalidResultError, String(err));
    assert.equal(err.code, 'invalid_result');
    assert.match(err.problems[0], /^\/answer: /);
    return true;
  });
  const taken = await pool.callTool('mcp__t__mismatch', {}, { validate: false });
  assert.deepEqual(taken.structuredContent, { answer: 42 });
  const trace = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const seen = await pool.callTool('mcp__t__meta', {}, { meta: { traceparent: trace } });
  assert.equal(JSON.parse(text(seen)).traceparent, trace);
  await assert.rejects(
    pool.callTool('mcp__t__sleep', { ms: 5000 }, { timeoutMs: 300, maxTotalMs: 600, onProgress: () => {} }),
    (err) => err.code === 'timeout' && /whole call/.test(err.message),
  );
  await assert.rejects(pool.callTool('mcp__t__echo', { text: 'x' }, { maxTotalMs: -1 }), InvalidArgumentError);
});

test('a tool call joins the active OpenTelemetry trace', async (t) => {
  const otel = require('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
  otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  t.after(() => otel.context.disable());
  const pool = await open(t);
  await pool.addServer(testServerInput('t'));
  const span = otel.trace.wrapSpanContext({
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: otel.TraceFlags.SAMPLED,
  });
  const inTrace = otel.trace.setSpan(otel.context.active(), span);
  const seen = await otel.context.with(inTrace, () => pool.callTool('mcp__t__meta'));
  assert.equal(JSON.parse(text(seen)).traceparent, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
  const mine = await otel.context.with(inTrace, () =>
    pool.callTool('mcp__t__meta', {}, { meta: { traceparent: '00-ab-cd-00' } }),
  );
  assert.equal(JSON.parse(text(mine)).traceparent, '00-ab-cd-00');
  const outside = await pool.callTool('mcp__t__meta');
  assert.equal(JSON.parse(text(outside)).traceparent, undefined);
});
