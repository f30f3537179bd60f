import { randomUUID } from 'node:crypto';
import {
  createTestDatabase,
  describeWithSharedServers,
  type SharedServers,
  type StripeFake,
  startSharedServers,
  startStripeFake,
  type TestDatabase,
} from '@platform/testing';
import { PrismaClient } from '../src/generated/prisma/client';
import { readMeterConfig } from '../src/usage/meters';
import { recordUsageEvents } from '../src/usage/record-usage';
import { API_KEY, PAYMENT_MIGRATIONS_DIR, STRIPE_KEY } from './support/harness';
import { startPaymentProcess } from './support/payment-process';
import { eventually, recordDeps, seedMeteredSubscription } from './support/usage';

// A second process shares the database: Postgres only (PGlite is in-process).
// TEST_DATABASE_URL/TEST_REDIS_URL (CI), else private servers, else one skip line.
const onPostgres = describeWithSharedServers(
  'the usage crash test (apps/payment/test/usage-crash.int.test.ts)',
);

onPostgres('a payment process killed while draining the usage outbox', () => {
  let servers: SharedServers;
  let fake: StripeFake;
  let database: TestDatabase;
  let prisma: PrismaClient;

  beforeAll(async () => {
    servers = await startSharedServers();
    fake = await startStripeFake();
    database = await createTestDatabase({
      migrationsDir: PAYMENT_MIGRATIONS_DIR,
      serverUrl: servers.databaseUrl,
    });
    prisma = new PrismaClient({ adapter: database.adapter });
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await database.drop();
    await fake.close();
    await servers?.close();
  });

  const env = () => ({
    DATABASE_URL: database.url ?? '',
    REDIS_URL: servers.redisUrl,
    PAYMENT_MS_API_KEY: API_KEY,
    STRIPE_SECRET_KEY: STRIPE_KEY,
    STRIPE_API_BASE: fake.url,
    LOG_LEVEL: 'info',
    PAYMENT_USAGE_METERS: 'tokens=ai_tokens',
    // Slow enough that the kill lands mid-drain; a short lease so the restart takes the dead one's rows soon.
    PAYMENT_USAGE_SENDER_RATE_PER_SECOND: '60',
    PAYMENT_USAGE_SENDER_BATCH: '20',
    PAYMENT_USAGE_SENDER_LEASE_SECONDS: '2',
    PAYMENT_USAGE_SENDER_IDLE_MS: '100',
    PAYMENT_USAGE_RETRY_BASE_MS: '100',
  });

  test('after SIGKILL and a restart, Stripe holds every event exactly once', async () => {
    fake.meters.seed({ event_name: 'ai_tokens' });
    const meters = readMeterConfig({ PAYMENT_USAGE_METERS: ['tokens=ai_tokens'] });
    const users = Array.from({ length: 5 }, (_, i) => `crash_user_${i}_${randomUUID()}`);
    for (const userId of users)
      await seedMeteredSubscription(fake, prisma, userId, 'ai_tokens', new Date(Date.now() - 60_000));
    const events = users.flatMap((user_id) =>
      Array.from({ length: 60 }, (_, i) => ({
        id: randomUUID(),
        user_id,
        value: i + 1,
        timestamp: new Date().toISOString(),
      })),
    );
    await recordUsageEvents(recordDeps(prisma, meters), { events });
    const successes = () =>
      fake.requests.filter((r) => r.path === '/v1/billing/meter_events' && r.status === 200);

    const first = await startPaymentProcess(env());
    await eventually(async () => successes().length >= 80, 60_000);
    expect(await first.signal('SIGKILL')).toBeNull();
    const sentBeforeKill = await prisma.usageEvent.count({ where: { status: 'sent' } });
    expect(sentBeforeKill).toBeLessThan(events.length);

    const second = await startPaymentProcess(env());
    await eventually(
      async () => (await prisma.usageEvent.count({ where: { status: 'pending' } })) === 0,
      60_000,
    );
    // SIGTERM: the sender stops with the server and the process exits 0.
    expect(await second.signal('SIGTERM')).toBe(0);

    for (const userId of users) {
      const customer = await prisma.customer.findUniqueOrThrow({ where: { userId } });
      const outbox = await prisma.usageEvent.aggregate({
        where: { userId, status: 'sent' },
        _sum: { value: true },
      });
      expect(fake.meters.total('ai_tokens', customer.stripeCustomerId)).toBe(outbox._sum.value);
      expect(outbox._sum.value).toBe((60 * 61) / 2);
    }
    for (const event of events) expect(fake.meters.acceptedCount(event.id)).toBe(1);
    expect(await prisma.usageEvent.count({ where: { status: { not: 'sent' } } })).toBe(0);
  });
});
