'use strict';
// The README the package ships, as a reader uses it: each complete program copied into a file
// of its own in one fresh folder (where `require('mcpmux')` finds the package under test), run,
// then run again, as a user runs a script twice. The fragments (Electron's `app`, an editor, a
// `pool` made earlier) are only parsed. `npx -y @modelcontextprotocol/server-everything` runs
// the same package, installed beforehand, so that no test needs the npm registry.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { packageDir, everything, tempDir, runNode } = require('./helpers');

/** What each example prints, found by a line only it has; null: a fragment, only parsed. */
const EXPECTED = new Map([
  ["const tools = await pool.listTools();", null],
  ["sandbox: { write: ['~/notes'], required: true },", null],
  ['const [skill] = await pool.listSkills();', null],
  ["const view = await pool.appView('mcp__clock__get-time');", null],
  ["pool.registerTool({\n  name: 'open_file',", null],
  ['// signin.js:', null],
  ['pool.setTokenStore({\n  load:', null],
  ["console.log(result.stop, result.iterations);  // finished 2", ['The answer is 42.', 'finished 2']],
  ["const mine = pool.agent({", null],
  ['const server = await pool.serveHttp();', [/^serving http:\/\/127\.0\.0\.1:\d+\/mcp$/m, /^Echo: hi$/m]],
  ["// main.js (Electron main process)", null],
]);

function examples() {
  const readme = fs.readFileSync(path.join(packageDir, 'README.md'), 'utf8');
  // Examples inside a list item are indented; the code is the same without it.
  return [...readme.matchAll(/^( *)```js\n([\s\S]*?)^\1```$/gm)].map(([, indent, code]) =>
    code.replace(new RegExp(`^${indent}`, 'gm'), ''),
  );
}

function expected(code) {
  const found = [...EXPECTED].filter(([key]) => code.includes(key)).map(([, lines]) => lines);
  assert.equal(found.length, 1, `an example of the README with no expectation here:\n${code}`);
  return found[0];
}

/** A folder on PATH whose `npx` runs server-everything, as `npx -y` would after fetching it. */
function npxShim() {
  const bin = tempDir('mcpmux-readme-bin-');
  const node = process.env.MCPMUX_SERVER_NODE || process.execPath;
  fs.writeFileSync(
    path.join(bin, 'npx'),
    `#!/bin/sh
if [ "$1" != "-y" ] || [ "$2" != "@modelcontextprotocol/server-everything" ]; then
  echo "the README test's npx runs server-everything only, not: $*" >&2
  exit 2
fi
shift 2
exec "${node}" "${everything}" "$@"
`,
    { mode: 0o755 },
  );
  return bin;
}

async function run(file, env) {
  const done = await runNode([file], { timeoutMs: 60_000, env });
  assert.equal(done.code, 0, `${path.basename(file)} failed:\n${done.stdout}\n${done.stderr}`);
  return done.stdout;
}

test('every example of the README runs as written, and again', async () => {
  const folder = tempDir('mcpmux-readme-');
  fs.mkdirSync(path.join(folder, 'node_modules'));
  fs.symlinkSync(packageDir, path.join(folder, 'node_modules', 'mcpmux'), 'dir');
  // The examples keep their configs in os.tmpdir(): a folder of this test's own, so that what
  // another run left in the machine's /tmp is not read, and the second round reads the first's.
  const env = {
    PATH: `${npxShim()}${path.delimiter}${process.env.PATH}`,
    TMPDIR: tempDir('mcpmux-readme-tmp-'),
  };
  const programs = [];
  for (const [i, code] of examples().entries()) {
    const lines = expected(code);
    // A module, so that a fragment's top-level `await` parses as it would in an ES module.
    const file = path.join(folder, `example_${i}.${lines ? 'js' : 'mjs'}`);
    fs.writeFileSync(file, code);
    if (!lines) {
      const parsed = await runNode(['--check', file]);
      assert.equal(parsed.code, 0, `example ${i} does not parse:\n${parsed.stderr}\n${code}`);
      continue;
    }
    programs.push([file, lines]);
  }
  assert.equal(programs.length, 2, 'the agent and the serve examples run');
  for (const round of ['first', 'second']) {
    for (const [file, lines] of programs) {
      const printed = await run(file, env);
      for (const line of lines) {
        const seen = typeof line === 'string' ? printed.includes(line) : line.test(printed);
        assert.ok(seen, `${round} run of ${path.basename(file)}: ${line} not in\n${printed}`);
      }
    }
  }
});
