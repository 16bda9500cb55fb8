'use strict';
// mcpmux's Node binding: a pool over a temporary config, one stdio server. The release addon
// comes from NAPI_RS_NATIVE_LIBRARY_PATH (see bench/setup.sh).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
// The release build bench/setup.sh puts under .deps/bench-node (the binding's index.js beside it).
const { Pool } = require('../../.deps/bench-node/index.js');
const { args, measure, report, now } = require('./bench_common.js');

async function main() {
  const { server, k, conc } = args();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpmux-bench-'));
  try {
    const pool = await Pool.open({ configPath: path.join(dir, 'servers.json'), connectOnAdd: false });
    await pool.addServer({ name: 'bench', config: { command: server } });
    const started = now();
    await pool.connect('bench');
    const connectNs = now() - started;
    const tools = await pool.listTools();
    if (!tools.some((t) => t.id === 'mcp__bench__echo')) throw new Error('no echo tool');
    const figures = await measure(k, conc, async () => {
      const r = await pool.callTool('mcp__bench__echo', { text: 'hello' });
      if (r.isError) throw new Error('tool failed');
    });
    await pool.close();
    report('mcpmux-node', k, conc, connectNs, figures);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
