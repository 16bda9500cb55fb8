// ESLint for the package's JavaScript: the CommonJS entry point, its ESM wrapper and the tests.
// native.js is napi's generated loader, so it is left alone.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['native.js', 'node_modules/', 'target/'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', ecmaVersion: 2022, globals: globals.node },
  },
  {
    // Scripts that run in a browser page (the MCP Apps test's sandbox hook).
    files: ['test/fixtures/apps-*.js'],
    languageOptions: { sourceType: 'script', ecmaVersion: 2022, globals: globals.browser },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', ecmaVersion: 2022, globals: globals.node },
  },
  {
    rules: {
      // `_`-prefixed names are kept on purpose (a callback's unused parameter).
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
];
