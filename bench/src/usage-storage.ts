import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  deleteExpiredRecords,
  insertLedgerRecords,
  type LedgerRecord,
  prismaSql,
  readFeed,
  summariseUsage,
} from '@platform/gateway/testing';
import { runOnLedgerDatabase } from './ledger-db';

// Usage: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/platform_test \
//          npm run usage-storage -w @platform/bench [-- <records>]   (default 10,000,000)
// Storage of the usage ledger at scale (issue 31, item 7): fills a fresh
// database with N raw records (1,000 users, 3 keys and 20 projects each, 90
// days) through the ledger's own insertLedgerRecords, which also adds them to
// their daily sums, then measures bytes per record (table + indexes) and the
// query times of the usage page, a feed page and one retention batch. Writes
// bench/results/usage-storage.md.

const N = Number(process.argv[2] ?? 10_000_000);
/** Records a statement: 20 bound parameters each, and Postgres binds at most 65,535. */
const BATCH = 3_000;
const REPEATS = 20;

/** Postgres's `md5(text)::uuid`. */
function md5Uuid(text: string): string {
  const h = createHash('md5').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
const USERS = Array.from({ length: 1000 }, (_, i) => md5Uuid(`user${i}`));
const KEYS = Array.from({ length: 3000 }, (_, i) => md5Uuid(`key${i}`));

/** Record g: users, keys and projects derived from g, so the data is the same on every run. */
function recordOf(g: number, now: number): LedgerRecord {
  const promptTokens = 50 + (g % 400);
  const completionTokens = 100 + (g % 700);
  return {
    requestId: randomUUID(),
    userId: USERS[g % 1000] as string,
    apiKeyId: KEYS[g % 3000] as string,
    projectId: `project-${g % 20}`,
    endpoint: g % 3 === 0 ? 'stream' : 'chat',
    lane: 'free',
    provider: 'groq',
    model: 'llama-3.3-70b-versatile',
    status: g % 50 === 0 ? 502 : 200,
    promptTokens,
    completionTokens,
    cachedTokens: 0,
    totalTokens: promptTokens + completionTokens,
    costMicros: promptTokens + 2 * completionTokens,
    currency: 'USD',
    estimated: g % 97 === 0,
    byok: g % 10 === 0,
    latencyMs: 200 + (g % 900),
    createdAt: now - (g % 90) * 86_400_000 - (g % 86_400) * 1000,
  };
}

async function medianMs(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < REPEATS; i += 1) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

runOnLedgerDatabase(async (prisma, database) => {
  if (database.kind !== 'postgres') throw new Error('set TEST_DATABASE_URL: this measures a Postgres server');
  const started = Date.now();
  for (let from = 0; from < N; from += BATCH) {
    const to = Math.min(N, from + BATCH);
    const now = Date.now();
    const records: LedgerRecord[] = [];
    for (let g = from; g < to; g += 1) records.push(recordOf(g, now));
    await insertLedgerRecords(prismaSql(prisma), records);
    if (Math.floor(to / 1_000_000) > Math.floor(from / 1_000_000) || to === N)
      process.stdout.write(`inserted ${to}\n`);
  }
  await prisma.$executeRawUnsafe('VACUUM ANALYZE usage_records');
  await prisma.$executeRawUnsafe('VACUUM ANALYZE usage_daily');
  const fillSeconds = (Date.now() - started) / 1000;

  const [sizes] = await prisma.$queryRawUnsafe<
    { heap: bigint; total: bigint; daily_total: bigint; daily_rows: bigint }[]
  >(`SELECT pg_relation_size('usage_records') AS heap, pg_total_relation_size('usage_records') AS total,
            pg_total_relation_size('usage_daily') AS daily_total, (SELECT count(*) FROM usage_daily) AS daily_rows`);
  const heap = Number(sizes?.heap);
  const total = Number(sizes?.total);
  const [row] = await prisma.$queryRawUnsafe<{ id: string }[]>(`SELECT md5('user42')::uuid::text AS id`);
  const someUser = row?.id ?? '';
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
  const quarterAgo = new Date(Date.now() - 89 * 86_400_000).toISOString().slice(0, 10);
  const page30 = await medianMs(() =>
    summariseUsage(prisma, { userId: someUser, from: monthAgo, to: today, currency: 'USD' }),
  );
  const page90 = await medianMs(() =>
    summariseUsage(prisma, { userId: someUser, from: quarterAgo, to: today, currency: 'USD' }),
  );
  const feedUser = await medianMs(() =>
    readFeed(prismaSql(prisma), { after: { xid: 0n, seq: 0n }, limit: 1000, userId: someUser }),
  );
  const feedAll = await medianMs(() =>
    readFeed(prismaSql(prisma), { after: { xid: 0n, seq: 0n }, limit: 1000 }),
  );
  const retentionStart = process.hrtime.bigint();
  const deleted = await deleteExpiredRecords(prismaSql(prisma), new Date(Date.now() - 88 * 86_400_000), 5000);
  const retentionMs = Number(process.hrtime.bigint() - retentionStart) / 1e6;

  const lines = [
    '# Usage ledger storage at scale',
    '',
    `Command: \`TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/platform_test npm run usage-storage -w @platform/bench -- ${N}\``,
    `(bench/src/usage-storage.ts). Postgres 15 on this 2-core machine, shared with other work; ${new Date().toISOString()}.`,
    `${N.toLocaleString('en-US')} raw records: 1,000 users, 3,000 keys, 20 projects per user, spread over 90 days; filled in ${fillSeconds.toFixed(0)} s.`,
    '',
    '| measure | value |',
    '|---|--:|',
    `| usage_records, heap | ${mb(heap)} (${(heap / N).toFixed(0)} bytes per record) |`,
    `| usage_records, heap + 5 indexes (pkey, request_id, (xid, id), (user_id, xid, id), created_at) | ${mb(total)} (${(total / N).toFixed(0)} bytes per record) |`,
    `| usage_daily (daily sums) | ${Number(sizes?.daily_rows).toLocaleString('en-US')} rows, ${mb(Number(sizes?.daily_total))} |`,
    `| usage page, one user, 30 days (GET /api/v1/usage, median of ${REPEATS}) | ${page30.toFixed(1)} ms |`,
    `| usage page, one user, 90 days | ${page90.toFixed(1)} ms |`,
    `| feed page of 1,000 records, one user, from the start | ${feedUser.toFixed(1)} ms |`,
    `| feed page of 1,000 records, all users, from the start | ${feedAll.toFixed(1)} ms |`,
    `| one retention batch (${deleted} rows past 88 days) | ${retentionMs.toFixed(0)} ms |`,
    '',
    'The usage page reads only usage_daily (its primary key starts with user_id, day), so its',
    "time depends on one user's rows in the range, not on the number of raw records.",
    '',
  ];
  const out = path.join(__dirname, '..', 'results', 'usage-storage.md');
  writeFileSync(out, lines.join('\n'));
  process.stdout.write(`${lines.join('\n')}\nwritten to ${out}\n`);
});
