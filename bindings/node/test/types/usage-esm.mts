// The ES module entry has the same types (index.d.mts re-exports index.d.ts), and a default
// export: the CommonJS entry's exports object.
import { Pool, TimeoutError, version } from 'mcpmux';
import mcpmux from 'mcpmux';

const pool: Pool = await mcpmux.Pool.open({});
const p2: Pool = await Pool.open();
console.log(pool === p2, new TimeoutError('x').code);
import { Agent, EVENT_NAMES, type AgentResult } from 'mcpmux';
const agent = new Agent(pool, { chat: async () => 'hi' });
const result: AgentResult = await agent.run('x');
console.log(result.stop, EVENT_NAMES.length);
const release: string = mcpmux.version;
console.log(release === version);
import { HttpServer, type HttpServeSettings } from 'mcpmux';
const settings: HttpServeSettings = { mode: 'direct', allowedOrigins: ['http://localhost:5173'] };
const served: HttpServer = await pool.serveHttp(settings);
console.log(served.url, served.token, served instanceof mcpmux.HttpServer);
await served.stop();
