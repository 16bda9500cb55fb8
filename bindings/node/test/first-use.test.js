'use strict';
// A fresh config as a new user meets it: a real server added and, at once, an agent run
// against the scripted model service over HTTP (mcpmux-fake-llm, OpenAI's wire format), with
// no listing call in between. The model searches, then calls the tool its search found.
const test = require('node:test');
const assert = require('node:assert/strict');

const { Pool, Agent, MessageTooLargeError } = require('mcpmux');
const { tempConfig, testServerInput, everythingStdioInput, startFakeLlm, text } = require('./helpers');

const SCRIPT = [
  { tools: [['search_tools', { query: 'echo' }]] },
  { callFound: 'echo', arguments: { message: 'hi from Node' } },
  { text: 'It said hi.' },
];

function toolResults(result) {
  return result.transcript.flatMap((m) => m.content).filter((b) => b.type === 'tool_result');
}

for (const withBroken of [false, true]) {
  test(`on a fresh config the agent finds the tool it searches for and calls it${withBroken ? ', beside a broken server' : ''}`, async (t) => {
    const baseUrl = await startFakeLlm(t, SCRIPT);
    // The defaults a new user gets: adding a server connects it.
    const pool = await Pool.open({ configPath: tempConfig(t), healthCheckIntervalMs: 0 });
    t.after(() => pool.close());
    await pool.addServer({ ...everythingStdioInput(), isTrusted: true });
    if (withBroken) await pool.addServer({ name: 'broken', config: { command: '/nonexistent/server' } });
    const agent = new Agent(pool, { type: 'openai', baseUrl, model: 'm' });
    const result = await agent.run('Use the echo tool and say hi');
    assert.equal(result.stop, 'finished');
    assert.equal(result.text, 'It said hi.');
    const [search, echoed] = toolResults(result);
    const answer = JSON.parse(search.content);
    assert.ok(answer.tools.some((h) => h.id === 'mcp__everything__echo'), search.content);
    assert.match(echoed.content, /Echo: hi from Node/);
    if (withBroken) {
      assert.equal(answer.unavailable[0].server, 'broken');
      assert.match(answer.unavailable[0].error, /cannot start `\/nonexistent\/server`/);
      const unlisted = await pool.ensureCatalog();
      assert.deepEqual(unlisted.map((u) => u.serverName), ['broken']);
    } else {
      assert.equal(answer.unavailable, undefined);
      assert.deepEqual(await pool.ensureCatalog(), []);
    }
  });
}

test('a reply over maxMessageBytes is a MessageTooLargeError naming the option', async (t) => {
  const pool = await Pool.open({ configPath: tempConfig(t), healthCheckIntervalMs: 0, maxMessageBytes: 65536 });
  t.after(() => pool.close());
  await pool.addServer(testServerInput('t'));
  await assert.rejects(pool.callTool('mcp__t__big', { size: 100_000 }), (err) => {
    assert.ok(err instanceof MessageTooLargeError, String(err));
    assert.equal(err.code, 'message_too_large');
    // The reply: 100,000 bytes of filler in its JSON-RPC envelope.
    assert.match(err.message, /server 't' sent a message of 100\d{3} bytes/);
    assert.match(err.message, /over the limit of 65536 bytes \(64 KiB\)/);
    assert.match(err.message, /maxMessageBytes/);
    return true;
  });
  assert.equal(text(await pool.callTool('mcp__t__big', { size: 3 })), 'xxx');
});
