import type { SubscriptionStatusResponse } from '@platform/contract';
import { perTestFile } from '@platform/testing';
import type { PrismaClient } from '../src/generated/prisma/client';
import { createSubscriptionStatusReader, MAX_READS_PER_STATEMENT } from '../src/subscriptions/get-status';
import { upsertSubscriptionSnapshot } from '../src/subscriptions/repo';
import { newUserId, startHarness } from './support/harness';

const h = perTestFile(startHarness);

const DAY_MS = 86_400_000;

/** The harness's Prisma client, counting the raw statements sent through it. */
function countingPrisma() {
  const counter = { statements: 0 };
  const prisma = new Proxy(h.prisma, {
    get(target, prop, receiver) {
      if (prop === '$queryRaw') {
        return (...args: unknown[]) => {
          counter.statements += 1;
          return (target.$queryRaw as (...a: unknown[]) => unknown)(...args);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  }) as PrismaClient;
  return { prisma, counter };
}

function reader(prisma: PrismaClient) {
  const deps = h.deps();
  // Snapshots stored below are fresh for a day: no read in this file reaches Stripe.
  return createSubscriptionStatusReader({ ...deps, prisma, maxAgeMs: DAY_MS });
}

async function customer(userId: string, syncedAt: Date | null = null) {
  await h.prisma.customer.create({
    data: {
      userId,
      stripeCustomerId: `cus_${userId}`,
      email: `${userId}@example.com`,
      subscriptionsSyncedAt: syncedAt,
    },
  });
}

async function subscription(userId: string, id: string, status: string, created: number, products: string[]) {
  await upsertSubscriptionSnapshot(h.prisma, {
    userId,
    syncedAt: h.clock.now(),
    snapshot: {
      id,
      stripeCustomerId: `cus_${userId}`,
      status,
      currentPeriodEnd: null,
      stripeCreatedAt: new Date(created * 1000),
      items: products.map((productId, i) => ({
        id: `si_${id}_${i}`,
        productId,
        priceId: `price_${productId}`,
        currentPeriodEnd: new Date(h.clock.now().getTime() + (i + 1) * DAY_MS),
      })),
    },
  });
}

describe('subscription status reads that arrive together', () => {
  it('share one statement, and each gets exactly the answer it gets alone', async () => {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((label) => newUserId(`batch-${label}`));
    const tag = a as string;
    await customer(a as string, h.clock.now());
    await subscription(a as string, `sub_${tag}_a1`, 'active', 100, ['prod_p', 'prod_r']);
    await customer(b as string, h.clock.now());
    await subscription(b as string, `sub_${tag}_b1`, 'canceled', 300, ['prod_p']);
    await subscription(b as string, `sub_${tag}_b2`, 'past_due', 200, ['prod_p', 'prod_q']);
    await subscription(b as string, `sub_${tag}_b3`, 'active', 100, ['prod_q']);
    // c has no customer row; d is a customer whose every subscription was listed (none).
    await customer(d as string, h.clock.now());
    const keys = [
      [a, 'prod_p'],
      [b, 'prod_p'],
      [b, 'prod_q'],
      [c, 'prod_p'],
      [d, 'prod_p'],
      [a, 'prod_p'],
      [a, 'prod_r'],
      [b, 'prod_r'],
    ].map(([userId, productId]) => ({ userId: userId as string, productId: productId as string }));

    const alone: SubscriptionStatusResponse[] = [];
    const single = countingPrisma();
    const singleReader = reader(single.prisma);
    for (const key of keys) alone.push(await singleReader.getStatus(key));
    expect(single.counter.statements).toBe(keys.length);

    const together = countingPrisma();
    const answers = await Promise.all(keys.map((key) => reader(together.prisma).getStatus(key)));
    expect(together.counter.statements).toBe(keys.length); // one reader each: nothing shared

    const shared = countingPrisma();
    const sharedReader = reader(shared.prisma);
    const batched = await Promise.all(keys.map((key) => sharedReader.getStatus(key)));
    expect(shared.counter.statements).toBe(1);
    expect(batched).toEqual(alone);
    expect(answers).toEqual(alone);

    // The answers themselves, so a wrong join cannot hide behind equal wrong answers.
    expect(batched.map((s) => [s.status, s.subscription_id])).toEqual([
      ['active', `sub_${tag}_a1`],
      ['past_due', `sub_${tag}_b2`],
      ['active', `sub_${tag}_b3`],
      ['none', ''],
      ['none', ''],
      ['active', `sub_${tag}_a1`],
      ['active', `sub_${tag}_a1`],
      ['none', ''],
    ]);
    expect(batched[6]?.product_id).toBe('prod_r');
    expect(batched[6]?.current_period_end).not.toBe(batched[0]?.current_period_end);
  });

  it(`sends at most ${MAX_READS_PER_STATEMENT} reads per statement`, async () => {
    const userId = newUserId('batch-many');
    await customer(userId);
    await subscription(userId, `sub_${userId}`, 'trialing', 100, ['prod_many']);
    const { prisma, counter } = countingPrisma();
    const many = reader(prisma);
    const count = MAX_READS_PER_STATEMENT * 2 + 1;
    const answers = await Promise.all(
      Array.from({ length: count }, () => many.getStatus({ userId, productId: 'prod_many' })),
    );
    expect(counter.statements).toBe(3);
    expect(new Set(answers.map((s) => s.status))).toEqual(new Set(['trialing']));
  });

  it('a failed statement fails every read in it, and the next reads go out again', async () => {
    const userId = newUserId('batch-fail');
    await customer(userId, h.clock.now());
    let fail = true;
    const prisma = new Proxy(h.prisma, {
      get(target, prop, receiver) {
        if (prop === '$queryRaw' && fail) return () => Promise.reject(new Error('connection terminated'));
        return Reflect.get(target, prop, receiver);
      },
    }) as PrismaClient;
    const failing = reader(prisma);
    const results = await Promise.allSettled([
      failing.getStatus({ userId, productId: 'prod_x' }),
      failing.getStatus({ userId, productId: 'prod_y' }),
    ]);
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : r.status))).toEqual([
      'Error: connection terminated',
      'Error: connection terminated',
    ]);
    fail = false;
    expect((await failing.getStatus({ userId, productId: 'prod_x' })).status).toBe('none');
  });
});
