'use strict';
// The packed tarball installs into a fresh folder, and both module systems load it and work.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const { packageDir, runNode, testServer } = require('./helpers');

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('npm pack, install the tarball elsewhere, require() and import', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpmux-pack-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const packed = JSON.parse(
    execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: packageDir, encoding: 'utf8' }),
  );
  const files = packed[0].files.map((f) => f.path).sort();
  const modules = fs.readdirSync(path.join(packageDir, 'lib')).map((f) => `lib/${f}`);
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'native.js', 'package.json', ...modules]) {
    assert.ok(files.includes(f), `${f} missing from ${files}`);
  }
  assert.ok(files.some((f) => /^mcpmux\..+\.node$/.test(f)), `no addon in ${files}`);
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), files.join());

  const app = path.join(dir, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  execFileSync(
    npm,
    ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', path.join(dir, packed[0].filename)],
    { cwd: app, stdio: 'pipe' },
  );

  const config = path.join(dir, 'config.json');
  const use = `
    const pool = await Pool.open({ configPath: ${JSON.stringify(config)}, connectOnAdd: false });
    await pool.addServer({ name: 't', config: { command: ${JSON.stringify(testServer)} } });
    const r = await pool.callTool('mcp__t__echo', { text: 'from ' + kind });
    console.log(r.content[0].text);
    await pool.removeServer('t');
    await pool.close();`;
  fs.writeFileSync(
    path.join(app, 'cjs.js'),
    `const { Pool, McpmuxError } = require('mcpmux');
     const kind = 'require';
     if (typeof McpmuxError !== 'function') throw new Error('no McpmuxError');
     (async () => { ${use} })().catch((e) => { console.error(e); process.exit(1); });`,
  );
  fs.writeFileSync(
    path.join(app, 'esm.mjs'),
    `import { Pool, NotFoundError } from 'mcpmux';
     import cjs from 'mcpmux';
     const kind = 'import';
     import * as esm from 'mcpmux';
     if (cjs.Pool !== Pool || cjs.NotFoundError !== NotFoundError) throw new Error('two copies');
     // Every export of the CommonJS entry is a named export of the ES module entry, the same object.
     for (const [name, value] of Object.entries(cjs)) {
       if (esm[name] !== value) throw new Error('the ES module entry lacks ' + name);
     }
     ${use}`,
  );
  for (const [file, expected] of [['cjs.js', 'from require'], ['esm.mjs', 'from import']]) {
    const r = await runNode([path.join(app, file)]);
    assert.equal(r.code, 0, `${file}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), expected);
  }
});
