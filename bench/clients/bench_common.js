'use strict';
// Timing shared by the Node clients: warm-up, K sequential calls, K calls C in flight.

function args() {
  const [server, k, conc] = process.argv.slice(2);
  return { server, k: Number(k), conc: Number(conc) };
}

const now = () => process.hrtime.bigint();

async function measure(k, conc, call) {
  const warmup = Math.min(Math.max(Math.floor(k / 10), 20), 500);
  for (let i = 0; i < warmup; i++) await call();
  const seq = new Array(k);
  let started = now();
  for (let i = 0; i < k; i++) {
    const t = now();
    await call();
    seq[i] = Number(now() - t);
  }
  const seqTotal = Number(now() - started);
  let remaining = k;
  const worker = async () => {
    while (remaining > 0) {
      remaining--;
      await call();
    }
  };
  started = now();
  await Promise.all(Array.from({ length: Math.min(conc, k) }, worker));
  const concTotal = Number(now() - started);
  seq.sort((a, b) => a - b);
  const q = (p) => seq[Math.round((seq.length - 1) * p)] / 1e3;
  return {
    seq_calls_per_s: k / (seqTotal / 1e9),
    p50_us: q(0.5),
    p99_us: q(0.99),
    conc_calls_per_s: k / (concTotal / 1e9),
  };
}

function report(client, k, conc, connectNs, figures) {
  const line = {
    client,
    lang: 'node',
    k,
    conc,
    connect_ms: Number(connectNs) / 1e6,
    ...figures,
    // maxRSS is in KiB.
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  };
  process.stdout.write(JSON.stringify(line) + '\n');
}

module.exports = { args, measure, report, now };
