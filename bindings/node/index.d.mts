// Types of the ES module entry (index.mjs): the CommonJS entry's, re-exported so there is one
// definition, plus the default export (the CommonJS entry's exports object).
export * from './index.js';
import mcpmux from './index.js';
export default mcpmux;
