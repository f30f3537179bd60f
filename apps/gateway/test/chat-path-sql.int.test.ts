import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@platform/testing';
import { findApiKeyByHash, writeLastUsed } from '../src/auth/api-key-repo';
import { prismaSql, type RawSql } from '../src/batching/raw-sql';
import { listUserBudgets, useInWindow } from '../src/budgets/repo';
import { PrismaClient } from '../src/generated/prisma/client';
import { findCapturedProjects } from '../src/observability/project-settings-repo';
import { findProviderKeys } from '../src/provider-keys/repo';
import { deleteExpiredRecords } from '../src/usage/feed-repo';
import type { LedgerRecord } from '../src/usage/record';
import { insertLedgerRecords } from '../src/usage/repo';
import { GATEWAY_MIGRATIONS_DIR } from './support/gateway-app';

// Issue 46: what a chat reads and writes in Postgres goes through raw SQL on the
// pool, never Prisma, whose query compiler costs a worker ~8-9 MB from its first
// query. These queries must read exactly what the Prisma ones did: each is run
// through the pool (pg, or PGlite without TEST_DATABASE_URL) and through Prisma's
// raw queries (prismaSql, the fallback without a pool), and both must agree with
// what Prisma's models read and wrote.

let database: TestDatabase;
let prisma: PrismaClient;
let userId: string;
let otherId: string;

beforeAll(async () => {
  database = await createTestDatabase({ migrationsDir: GATEWAY_MIGRATIONS_DIR });
  prisma = new PrismaClient({ adapter: database.adapter });
  userId = (await prisma.user.create({ data: { email: 'sql@example.test' } })).id;
  otherId = (await prisma.user.create({ data: { email: 'other@example.test' } })).id;
});

afterAll(async () => {
  await prisma.$disconnect();
  await database.drop();
});

const runners: [string, () => RawSql][] = [
  ['the pool', () => database.db],
  ['Prisma raw queries', () => prismaSql(prisma)],
];

describe.each(runners)('chat-path queries through %s', (via, sqlOf) => {
  const tag = via.replace(/\W+/g, '-');

  it('finds a key by its hash with rules, expiry and revocation; an unknown hash is null', async () => {
    const sql = sqlOf();
    const expires = new Date('2031-02-03T04:05:06.789Z');
    const rules = { lanes: ['free'], requests_per_minute: 7 };
    const live = await prisma.apiKey.create({
      data: {
        userId,
        name: 'live',
        scope: 'ai',
        prefix: 'sk',
        hash: `live-${tag}`,
        rules,
        expiresAt: expires,
      },
    });
    await prisma.apiKey.create({
      data: { userId, name: 'gone', scope: 'full', prefix: 'sk', hash: `gone-${tag}`, revokedAt: new Date() },
    });
    expect(await findApiKeyByHash(sql, `live-${tag}`)).toEqual({
      id: live.id,
      userId,
      scope: 'ai',
      revoked: false,
      rules: { lanes: ['free'], requests_per_minute: 7 },
      expiresAt: expires.getTime(),
    });
    expect(await findApiKeyByHash(sql, `gone-${tag}`)).toMatchObject({
      scope: 'full',
      revoked: true,
      rules: undefined,
      expiresAt: null,
    });
    expect(await findApiKeyByHash(sql, `nobody-${tag}`)).toBeNull();
    // Text that is not a hash is only a value, never SQL.
    expect(await findApiKeyByHash(sql, "x' OR '1'='1")).toBeNull();
  });

  it('writes last-used times in one statement: the latest per key, never backwards', async () => {
    const sql = sqlOf();
    const make = (name: string) =>
      prisma.apiKey.create({ data: { userId, name, scope: 'ai', prefix: 'sk', hash: `${name}-${tag}` } });
    const [a, b, c] = await Promise.all([make('a'), make('b'), make('c')]);
    const t = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s));
    await writeLastUsed(sql, [
      { id: a.id, at: t(10) },
      { id: b.id, at: t(5) },
      { id: a.id, at: t(20) },
      { id: a.id, at: t(15) },
    ]);
    // Older than what is stored: a and b stay; c is new.
    await writeLastUsed(sql, [
      { id: a.id, at: t(1) },
      { id: b.id, at: t(4) },
      { id: c.id, at: t(3) },
    ]);
    await writeLastUsed(sql, []);
    const rows = await prisma.apiKey.findMany({
      where: { id: { in: [a.id, b.id, c.id] } },
      select: { id: true, lastUsedAt: true },
    });
    const at = Object.fromEntries(rows.map((r) => [r.id, r.lastUsedAt?.toISOString()]));
    expect(at).toEqual({
      [a.id]: t(20).toISOString(),
      [b.id]: t(5).toISOString(),
      [c.id]: t(3).toISOString(),
    });
  });

  it("reads a user's stored provider keys, bytes intact, by provider", async () => {
    const sql = sqlOf();
    const owner = (await prisma.user.create({ data: { email: `keys-${tag}@example.test` } })).id;
    const bytes = (n: number, from: number) =>
      Uint8Array.from({ length: n }, (_, i) => (from + i * 37) % 256);
    const created = new Date('2030-05-06T07:08:09.123Z');
    for (const [provider, seed] of [
      ['openai', 3],
      ['anthropic', 200],
    ] as const)
      await prisma.providerKey.create({
        data: {
          userId: owner,
          provider,
          masterKeyId: `k-${provider}`,
          iv: bytes(12, seed),
          ciphertext: bytes(45, seed + 1),
          authTag: bytes(16, seed + 2),
          last4: provider.slice(0, 4),
          createdAt: created,
        },
      });
    const rows = await findProviderKeys(sql, owner);
    expect(rows.map((r) => r.provider)).toEqual(['anthropic', 'openai']);
    const openai = rows[1];
    expect(openai?.masterKeyId).toBe('k-openai');
    expect(Buffer.from(openai?.iv ?? []).equals(Buffer.from(bytes(12, 3)))).toBe(true);
    expect(Buffer.from(openai?.ciphertext ?? []).equals(Buffer.from(bytes(45, 4)))).toBe(true);
    expect(Buffer.from(openai?.authTag ?? []).equals(Buffer.from(bytes(16, 5)))).toBe(true);
    expect(openai?.createdAt.toISOString()).toBe(created.toISOString());
    expect(await findProviderKeys(sql, otherId)).toEqual([]);
  });

  it("lists a user's budgets with limits as numbers, and sums a window's use per subject", async () => {
    const sql = sqlOf();
    const owner = (await prisma.user.create({ data: { email: `budgets-${tag}@example.test` } })).id;
    const big = 2 ** 52 + 1;
    await prisma.budget.createMany({
      data: [
        { userId: owner, scope: 'user', subject: '', period: 'daily', unit: 'tokens', limit: 1000n },
        {
          userId: owner,
          scope: 'project',
          subject: 'alpha',
          period: 'monthly',
          unit: 'cost',
          limit: BigInt(big),
        },
      ],
    });
    const listed = await listUserBudgets(sql, owner);
    expect(listed.sort((x, y) => x.scope.localeCompare(y.scope))).toEqual([
      { scope: 'project', subject: 'alpha', period: 'monthly', unit: 'cost', limit: big },
      { scope: 'user', subject: '', period: 'daily', unit: 'tokens', limit: 1000 },
    ]);
    expect(await listUserBudgets(sql, otherId)).toEqual([]);

    const row = (day: string, projectId: string, apiKeyId: string, tokens: number, cost: number) => ({
      userId: owner,
      day: new Date(`${day}T00:00:00Z`),
      projectId,
      apiKeyId,
      lane: 'free',
      provider: 'openai',
      model: 'm',
      byok: false,
      currency: 'usd',
      requests: 1,
      totalTokens: BigInt(tokens),
      costMicros: BigInt(cost),
    });
    await prisma.usageDaily.createMany({
      data: [
        row('2030-03-01', 'alpha', 'k1', 10, 100),
        row('2030-03-02', 'alpha', 'k2', 20, 200),
        row('2030-03-02', 'beta', 'k1', 40, 400),
        row('2030-03-03', 'alpha', 'k1', 80, 800),
      ],
    });
    const window = (from: string, to: string) => ({
      label: from,
      startsAt: Date.parse(`${from}T00:00:00Z`),
      endsAt: Date.parse(`${to}T00:00:00Z`),
    });
    const use = (
      scope: 'user' | 'project' | 'api_key',
      subject: string,
      unit: 'tokens' | 'cost',
      w = window('2030-03-01', '2030-03-03'),
    ) => useInWindow(sql, owner, { scope, subject, period: 'daily', unit }, w);
    // The window ends before 03-03: its 80 tokens are out.
    expect(await use('user', '', 'tokens')).toBe(70);
    expect(await use('user', '', 'cost')).toBe(700);
    expect(await use('project', 'alpha', 'tokens')).toBe(30);
    expect(await use('api_key', 'k1', 'cost')).toBe(500);
    expect(await use('project', "alpha' OR '1'='1", 'tokens')).toBe(0);
    expect(await use('user', '', 'tokens', window('2030-03-02', '2030-03-03'))).toBe(60);
    expect(await use('user', '', 'tokens', window('2030-04-01', '2030-05-01'))).toBe(0);
  });

  it('the usage retention deletes a batch of the oldest raw records, counts them, and keeps the daily sums', async () => {
    const sql = sqlOf();
    const owner = (await prisma.user.create({ data: { email: `retention-${tag}@example.test` } })).id;
    const day = 86_400_000;
    const record = (ageDays: number): LedgerRecord => ({
      requestId: randomUUID(),
      userId: owner,
      apiKeyId: null,
      projectId: 'kept',
      endpoint: 'chat',
      lane: 'free',
      provider: 'openai',
      model: 'm',
      status: 200,
      promptTokens: 3,
      completionTokens: 4,
      cachedTokens: 0,
      totalTokens: 7,
      costMicros: 11,
      currency: 'usd',
      estimated: false,
      byok: false,
      latencyMs: 5,
      createdAt: Date.now() - ageDays * day,
    });
    await insertLedgerRecords(sql, [record(40), record(39), record(38), record(1)]);
    const cutoff = new Date(Date.now() - 30 * day);
    // A batch of 2, oldest first; then the last old one; then nothing.
    expect(await deleteExpiredRecords(sql, cutoff, 2)).toBe(2);
    expect(await deleteExpiredRecords(sql, cutoff, 2)).toBe(1);
    expect(await deleteExpiredRecords(sql, cutoff, 2)).toBe(0);
    const [left] = await database.db.query<{ raw: number; sums: number }>(
      `SELECT (SELECT count(*)::int FROM usage_records WHERE user_id = $1::uuid) AS raw,
              (SELECT sum(total_tokens)::int FROM usage_daily WHERE user_id = $1::uuid) AS sums`,
      [owner],
    );
    expect(left).toEqual({ raw: 1, sums: 28 });
  });

  it("names the owner's projects that capture content, and only those", async () => {
    const sql = sqlOf();
    const owner = (await prisma.user.create({ data: { email: `capture-${tag}@example.test` } })).id;
    await prisma.projectSettings.createMany({
      data: [
        { ownerUserId: owner, projectId: 'on', captureContent: true },
        { ownerUserId: owner, projectId: 'off', captureContent: false },
        { ownerUserId: otherId, projectId: `theirs-${tag}`, captureContent: true },
      ],
    });
    expect(await findCapturedProjects(sql, owner)).toEqual(['on']);
  });
});
