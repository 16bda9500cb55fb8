// Preloaded by scripts/test-node.sh (`node --import ./test/as-esm.mjs --test ...`) to run the
// whole suite once through the ES module entry: after it, every test file's
// `require('mcpmux')` returns what `import * as mcpmux from 'mcpmux'` gives, so a name missing
// from index.mjs, or an object that differs between the two entries, fails the tests using it.
import * as esm from 'mcpmux';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// index.mjs loaded the CommonJS entry through require, so it is in the cache; the tests' own
// require then finds the namespace there.
const entry = require.cache[require.resolve('mcpmux')];
if (!entry) throw new Error('as-esm.mjs: the CommonJS entry was not loaded by index.mjs');
entry.exports = esm;
