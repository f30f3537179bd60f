import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  deleteExpiredRecords,
  GATEWAY_MIGRATIONS_DIR,
  PrismaClient,
  readFeed,
  summariseUsage,
} from '@platform/gateway/testing';
import { createTestDatabase } from '@platform/testing';

// Usage: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/platform_test \
//          npm run usage-storage -w @platform/bench [-- <records>]   (default 10,000,000)
// Storage of the usage ledger at scale (issue 31, item 7): fills a fresh
// database with N raw records (1,000 users, 3 keys and 20 projects each, 90
// days), builds their daily sums the way the ledger does, then measures bytes
// per record (table + indexes) and the query times of the usage page, a feed
// page and one retention batch. Writes bench/results/usage-storage.md.

const N = Number(process.argv[2] ?? 10_000_000);
const CHUNK = 1_000_000;
const REPEATS = 20;

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

async function main(): Promise<void> {
  const database = await createTestDatabase({ migrationsDir: GATEWAY_MIGRATIONS_DIR });
  if (database.kind !== 'postgres') throw new Error('set TEST_DATABASE_URL: this measures a Postgres server');
  const prisma = new PrismaClient({ adapter: database.adapter });
  const started = Date.now();
  try {
    for (let from = 0; from < N; from += CHUNK) {
      const to = Math.min(N, from + CHUNK) - 1;
      // Users, keys and projects derived from g, so the data is the same on every run.
      await prisma.$executeRawUnsafe(`
        INSERT INTO usage_records (request_id, user_id, api_key_id, project_id, endpoint, lane, provider, model,
                                   status, prompt_tokens, completion_tokens, cached_tokens, total_tokens,
                                   cost_micros, currency, estimated, byok, latency_ms, xid, created_at)
        SELECT gen_random_uuid(), md5('user' || (g % 1000))::uuid, md5('key' || (g % 3000))::uuid,
               'project-' || (g % 20), CASE WHEN g % 3 = 0 THEN 'stream' ELSE 'chat' END, 'free', 'groq',
               'llama-3.3-70b-versatile', CASE WHEN g % 50 = 0 THEN 502 ELSE 200 END,
               50 + g % 400, 100 + g % 700, 0, 150 + g % 400 + g % 700, (50 + g % 400) + 2 * (100 + g % 700),
               'USD', g % 97 = 0, g % 10 = 0, 200 + g % 900, pg_current_xact_id()::text::bigint,
               now() - ((g % 90) * interval '1 day') - ((g % 86400) * interval '1 second')
          FROM generate_series(${from}, ${to}) g`);
      process.stdout.write(`inserted ${to + 1}\n`);
    }
    await prisma.$executeRawUnsafe(`
      INSERT INTO usage_daily (user_id, day, project_id, api_key_id, lane, provider, model, byok, currency,
                               requests, errors, estimated, prompt_tokens, completion_tokens, cached_tokens,
                               total_tokens, cost_micros)
      SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, project_id, coalesce(api_key_id::text, ''),
             coalesce(lane, ''), coalesce(provider, ''), coalesce(model, ''), byok, currency,
             count(*), count(*) FILTER (WHERE status >= 400), count(*) FILTER (WHERE estimated),
             sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens), sum(total_tokens), sum(cost_micros)
        FROM usage_records GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9`);
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
      readFeed(prisma, { after: { xid: 0n, seq: 0n }, limit: 1000, userId: someUser }),
    );
    const feedAll = await medianMs(() => readFeed(prisma, { after: { xid: 0n, seq: 0n }, limit: 1000 }));
    const retentionStart = process.hrtime.bigint();
    const deleted = await deleteExpiredRecords(prisma, new Date(Date.now() - 88 * 86_400_000), 5000);
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
  } finally {
    await prisma.$disconnect();
    await database.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
