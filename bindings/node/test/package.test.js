'use strict';
// What npm users install: the root package `mcpmux` (JS, types, napi's loader) and the platform
// package with the addon, from the tarballs scripts/dist/node.sh packs into dist/npm. The
// installed layout, one version across the three places that state it, and the errors a user
// gets when the platform package is missing or from another release.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const mcpmux = require('mcpmux');
const { installed, nativeAddon, packageDir, repoRoot, runNode, tempDir } = require('./helpers');

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const PLATFORM_PACKAGE = 'mcpmux-linux-x64-gnu';
const ADDON = 'mcpmux.linux-x64-gnu.node';
const distDir = process.env.MCPMUX_NPM_DIST
  ? path.resolve(process.env.MCPMUX_NPM_DIST)
  : path.join(repoRoot, 'dist', 'npm');

function rootTarball() {
  const file = path.join(distDir, `mcpmux-${pkg.version}.tgz`);
  assert.ok(fs.existsSync(file), `${file} is missing: run \`bash scripts/dist.sh node\``);
  return file;
}

function filesUnder(dir) {
  return fs.readdirSync(dir, { recursive: true }).map((f) => f.split(path.sep).join('/'));
}

test('the package, its export and its addon are the same release', () => {
  assert.match(pkg.version, /^\d+\.\d+\.\d+/);
  assert.equal(mcpmux.version, pkg.version);
  assert.equal(nativeAddon().version(), pkg.version, 'the addon was built from another release');
});

test('the suite runs through the entry it says (MCPMUX_TEST_ENTRY=import: index.mjs)', () => {
  // scripts/test-node.sh runs every file on Node 22 with test/as-esm.mjs preloaded.
  const viaImport = process.env.MCPMUX_TEST_ENTRY === 'import';
  assert.equal(Object.prototype.toString.call(mcpmux) === '[object Module]', viaImport);
});

test('installed: JS and types in mcpmux, the addon only in its platform package', { skip: !installed && 'runs on the installed tarballs (scripts/test-node.sh)' }, () => {
  assert.deepEqual(pkg.optionalDependencies, { [PLATFORM_PACKAGE]: pkg.version });
  const files = filesUnder(packageDir);
  assert.deepEqual(files.filter((f) => f.endsWith('.node')), [], 'the root package carries no addon');
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'native.js', 'README.md', 'LICENSE']) {
    assert.ok(files.includes(f), `${f} missing from the root package: ${files}`);
  }
  for (const f of pkg.files) assert.ok(fs.existsSync(path.join(packageDir, f)), `"files" names ${f}, which is missing`);
  assert.ok(!files.some((f) => /^(src|test|target|node_modules)\//.test(f)), files.join());

  const platformDir = path.dirname(require.resolve(`${PLATFORM_PACKAGE}/package.json`, { paths: [packageDir] }));
  const platform = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8'));
  assert.equal(platform.name, PLATFORM_PACKAGE);
  assert.equal(platform.version, pkg.version);
  assert.deepEqual([platform.os, platform.cpu, platform.libc], [['linux'], ['x64'], ['glibc']]);
  assert.equal(platform.main, ADDON);
  assert.equal(platform.license, pkg.license);
  assert.deepEqual(filesUnder(platformDir).sort(), ['LICENSE', 'README.md', ADDON, 'package.json'].sort());
  // The addon this process loaded is the platform package's.
  const loaded = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
  assert.deepEqual(loaded, [path.join(platformDir, ADDON)]);
});

/** A fresh app with the root tarball installed, and the platform package too if `withAddon`
 * (else with `--omit=optional`, as npm installs it when told to leave optional dependencies
 * out), and a script that loads mcpmux both ways and prints what each threw. */
function freshApp({ withAddon }) {
  const app = tempDir('mcpmux-app-');
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  const tarballs = [rootTarball()];
  if (withAddon) tarballs.push(path.join(distDir, `${PLATFORM_PACKAGE}-${pkg.version}.tgz`));
  execFileSync(
    npm,
    ['install', '--offline', ...(withAddon ? [] : ['--omit=optional']), '--no-audit', '--no-fund', '--loglevel=error', ...tarballs],
    { cwd: app, stdio: 'pipe' },
  );
  assert.ok(fs.existsSync(path.join(app, 'node_modules', 'mcpmux', 'package.json')));
  assert.equal(fs.existsSync(path.join(app, 'node_modules', PLATFORM_PACKAGE, ADDON)), withAddon);
  const report = (how) => `(e) => console.log(JSON.stringify({ how: ${JSON.stringify(how)}, message: e.message, cause: e.cause?.message }))`;
  fs.writeFileSync(
    path.join(app, 'load.mjs'),
    `import { createRequire } from 'node:module';
     try { createRequire(import.meta.url)('mcpmux'); console.log('{}'); } catch (e) { (${report('require')})(e); }
     await import('mcpmux').then(() => console.log('{}'), ${report('import')});`,
  );
  return app;
}

async function loadErrors(app, env = {}) {
  const r = await runNode([path.join(app, 'load.mjs')], { env });
  // The script catches both errors: nothing may end the process behind its back.
  assert.equal(r.code, 0, `the process did not survive the errors it caught: ${r.stderr}`);
  return r.stdout.trim().split('\n').map((line) => JSON.parse(line));
}

test('without its platform package, require and import fail with one error naming what to install', async () => {
  const app = freshApp({ withAddon: false });
  const errors = await loadErrors(app);
  assert.deepEqual(errors.map((e) => e.how), ['require', 'import']);
  for (const e of errors) {
    assert.ok(e.message.includes('linux/x64/glibc'), e.message);
    assert.ok(e.message.includes(`npm install ${PLATFORM_PACKAGE}@${pkg.version}`), e.message);
    // napi's loader error, with every candidate it tried, stays reachable.
    assert.match(e.cause, /Cannot find native binding/);
  }
});

test('an addon of another release is refused when the package loads', async () => {
  const app = freshApp({ withAddon: false });
  // napi's loader takes an addon from this path first; a module standing in for another
  // release's addon, which says its version as the real one does.
  const other = path.join(app, 'other-release.js');
  fs.writeFileSync(other, "exports.version = () => '0.0.1-other';");
  const errors = await loadErrors(app, { NAPI_RS_NATIVE_LIBRARY_PATH: other });
  for (const e of errors) {
    assert.ok(e.message.includes(`from release 0.0.1-other, this package is ${pkg.version}`), e.message);
  }
  assert.equal(errors.length, 2);
});

test('a platform package whose addon does not load: the error says which, and why', async () => {
  const app = freshApp({ withAddon: true });
  // What a truncated download or a disk error leaves.
  fs.writeFileSync(path.join(app, 'node_modules', PLATFORM_PACKAGE, ADDON), 'not an ELF file');
  const errors = await loadErrors(app);
  assert.equal(errors.length, 2);
  for (const e of errors) {
    assert.ok(e.message.includes(`${PLATFORM_PACKAGE} is installed but its addon does not load on linux/x64/glibc: `), e.message);
    assert.match(e.message, /invalid ELF header|file too short/);
  }
});
