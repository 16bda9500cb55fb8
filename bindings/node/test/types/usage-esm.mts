// The ES module entry has the same types.
import { Pool, TimeoutError } from 'mcpmux';
import mcpmux from 'mcpmux';

const pool: Pool = await mcpmux.Pool.open({});
const p2: Pool = await Pool.open();
console.log(pool === p2, new TimeoutError('x').code);
