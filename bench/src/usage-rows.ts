import { randomUUID } from 'node:crypto';
import { insertLedgerRecords } from '@platform/gateway/testing';
import { runOnLedgerDatabase } from './ledger-db';

// Usage: tsx --conditions=source src/usage-rows.ts
// CPU cost of writing one batch of usage rows: Prisma createMany, as
// the usage recorder once did, against insertLedgerRecords (one parameterised multi-row
// INSERT through Prisma's raw path), which the usage-row writer uses now. Explains the gap between `chat` and `chat-without-usage-rows`.

const BATCHES = [1, 100, 300, 500];
const WARMUP = 2;
const REPEATS = 5;

async function cpuMsOf(fn: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function medianCpuMs(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i += 1) await fn();
  const samples: number[] = [];
  for (let i = 0; i < REPEATS; i += 1) samples.push(await cpuMsOf(fn));
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

runOnLedgerDatabase(async (prisma, database) => {
  const user = await prisma.user.create({ data: { email: `usage-rows-${process.pid}@example.com` } });
  const row = () => ({
    requestId: randomUUID(),
    userId: user.id,
    apiKeyId: null,
    projectId: 'bench',
    endpoint: 'chat',
    lane: 'free',
    provider: 'groq',
    model: 'free-a',
    status: 200,
    promptTokens: 7,
    completionTokens: 5,
    cachedTokens: 0,
    totalTokens: 12,
    costMicros: 4,
    currency: 'USD',
    estimated: false,
    byok: false,
    latencyMs: 20,
    createdAt: Date.now(),
  });
  const insertRaw = (rows: Array<ReturnType<typeof row>>) => insertLedgerRecords(database.db, rows);
  console.log(
    `database: ${database.kind}; median of ${REPEATS} after ${WARMUP} warm-up batches; CPU of this process\n`,
  );
  console.log(
    '| rows per batch | Prisma createMany CPU ms | insertLedgerRecords CPU ms | createMany CPU ms per row |',
  );
  console.log('|--:|--:|--:|--:|');
  for (const size of BATCHES) {
    const batch = () => Array.from({ length: size }, row);
    const prismaMs = await medianCpuMs(() =>
      prisma.usageRecord.createMany({
        data: batch().map(({ createdAt, costMicros, ...r }) => ({
          ...r,
          costMicros: BigInt(costMicros),
          createdAt: new Date(createdAt),
        })),
      }),
    );
    const rawMs = await medianCpuMs(() => insertRaw(batch()));
    console.log(
      `| ${size} | ${prismaMs.toFixed(1)} | ${rawMs.toFixed(1)} | ${(prismaMs / size).toFixed(3)} |`,
    );
  }
});
