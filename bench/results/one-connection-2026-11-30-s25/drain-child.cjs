// Experiment only: the ledger drain in its own process.
const Redis = require('ioredis'); const { Pool } = require('pg');
const { createRedisStreamLedger } = require('/work/main/apps/gateway/dist-exp/usage/ledger-redis-stream.js');
const redis = new Redis(process.env.REDIS_URL);
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const sql = { query: (s, p) => pool.query(s, p).then((r) => r.rows), execute: (s, p) => pool.query(s, p).then((r) => r.rowCount) };
const noop = () => {};
const logger = { info: noop, debug: noop, warn: (...a) => console.error(...a), error: (...a) => console.error(...a), child() { return this; } };
const ledger = createRedisStreamLedger({ redis, prisma: null, sql, logger, streamKey: process.env.EXP_STREAM_KEY });
ledger.start();
process.on('disconnect', () => process.exit(0));
