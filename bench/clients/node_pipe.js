'use strict';
// Node's floor: child_process pipes to the server. Preformatted request lines, replies matched
// to their promises by the id read from the line's first bytes, no JSON parsing: what a Node
// client that costs nothing of its own would score.
//
// With `--json` (the `node-pipe-json` client): the floor of a client that hands back parsed
// results, which adds what no such client skips: `JSON.stringify` of the call's arguments and
// `JSON.parse` of each reply (matched to its promise by the parsed id).
const { spawn } = require('node:child_process');
const { args, measure, report, now } = require('./bench_common.js');

const ARGUMENTS = { text: 'hello' };

async function main(parsed) {
  const { server, k, conc } = args();
  const started = now();
  const child = spawn(server, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map();
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (parsed) {
        const message = JSON.parse(line);
        const resolve = waiting.get(message.id);
        if (resolve) {
          waiting.delete(message.id);
          resolve(message);
        }
        continue;
      }
      // The bench server writes `{"id":N,...`.
      const start = line.indexOf('"id":') + 5;
      const id = parseInt(line.slice(start, line.indexOf(',', start)), 10);
      const resolve = waiting.get(id);
      if (resolve) {
        waiting.delete(id);
        resolve(line);
      }
    }
  });
  const request = (id, line) =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(line);
    });
  await request(
    0,
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"node-pipe","version":"0"}}}\n',
  );
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const connectNs = now() - started;
  let nextId = 1;
  const callParsed = async () => {
    const id = nextId++;
    const message = await request(
      id,
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${JSON.stringify(ARGUMENTS)}}}\n`,
    );
    if (message.result.content[0].text !== 'hello') {
      throw new Error(`unexpected answer: ${JSON.stringify(message)}`);
    }
  };
  const figures = await measure(k, conc, parsed ? callParsed : async () => {
    const id = nextId++;
    const line = await request(
      id,
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}\n`,
    );
    if (!line.includes('hello')) throw new Error(`unexpected answer: ${line}`);
  });
  child.stdin.end();
  await new Promise((resolve) => child.on('exit', resolve));
  report(parsed ? 'node-pipe-json' : 'node-pipe', k, conc, connectNs, figures);
}

main(process.argv.slice(5).includes('--json')).catch((e) => {
  console.error(e);
  process.exit(1);
});
