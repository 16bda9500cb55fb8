'use strict';
// A stand-in for an OpenAI-compatible Chat Completions service on 127.0.0.1, in the exact
// streaming wire format of tests/src/fake_llm.rs: text in word chunks, each tool call's
// arguments split across two `tool_calls` deltas, then the finish reason, the usage and
// `[DONE]`. Tests script the model's turns; the server plays them back in order.
const http = require('node:http');

/**
 * One scripted turn: `{ text }`, `{ tools: [[name, args], ...] }`, `{ status }` (an HTTP
 * failure), optionally with `delayMs` before the answer starts.
 */
function sse(turn, n) {
  const chunks = [];
  let finish;
  if (turn.text !== undefined) {
    for (const w of turn.text.match(/[^ ]+ ?| /g) ?? []) {
      chunks.push({ choices: [{ index: 0, delta: { content: w } }] });
    }
    finish = 'stop';
  } else {
    turn.tools.forEach(([name, args], i) => {
      const a = JSON.stringify(args);
      const half = Math.floor(a.length / 2);
      chunks.push({
        choices: [{ index: 0, delta: { tool_calls: [
          { index: i, id: `call_${n}_${i}`, type: 'function', function: { name, arguments: a.slice(0, half) } },
        ] } }],
      });
      chunks.push({
        choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: a.slice(half) } }] } }],
      });
    });
    finish = 'tool_calls';
  }
  chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  chunks.push({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 10 } });
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
}

/** Starts the fake; `t.after` stops it. Resolves with `{ baseUrl, requests, remaining() }`. */
async function startFakeOpenAi(t, turns) {
  const queue = [...turns];
  const requests = [];
  let served = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end('no such path');
        return;
      }
      try {
        requests.push(JSON.parse(body));
      } catch {
        requests.push(null);
      }
      const turn = queue.shift();
      served += 1;
      if (turn === undefined) {
        res.writeHead(500).end('script exhausted');
        return;
      }
      if (turn.delayMs) await new Promise((r) => setTimeout(r, turn.delayMs));
      if (turn.status !== undefined) {
        res.writeHead(turn.status, { 'retry-after': '0' }).end(`{"error": {"message": "status ${turn.status}"}}`);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse(turn, served));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    remaining: () => queue.length,
  };
}

/** The function names a request offered the model. */
const toolsOffered = (request) => (request.tools ?? []).map((t) => t.function.name);

module.exports = { startFakeOpenAi, toolsOffered };
