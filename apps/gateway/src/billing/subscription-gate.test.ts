import type { SubscriptionStatus } from '@platform/contract';
import { AppError } from '@platform/errors';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { createSubscriptionGate } from './subscription-gate';

const P = { product: 'prod' };

function setup() {
  let now = 1_000_000;
  const status: Record<string, SubscriptionStatus> = {};
  const features = new Set<string>();
  /** `user/meter` pairs payment calls billable ('' = its default meter). */
  const billable = new Set<string>();
  let calls = 0;
  let down = false;
  const gate = createSubscriptionGate({
    payment: {
      getSubscriptionStatus: async ({ user_id, product_id }) => {
        calls += 1;
        // Read when payment answers, then delivered a little later.
        const answer = status[`${user_id}/${product_id}`] ?? 'none';
        const failing = down;
        await new Promise((r) => setTimeout(r, 5));
        if (failing) throw new Error('connect ECONNREFUSED');
        return { status: answer };
      },
      isEntitled: async (userId, feature) => {
        calls += 1;
        if (down) throw new Error('connect ECONNREFUSED');
        return features.has(`${userId}/${feature}`);
      },
      getUsageBillable: async (userId, meter) => ({ billable: billable.has(`${userId}/${meter ?? ''}`) }),
    },
    ttlMs: 30_000,
    timeoutMs: 100,
    clock: () => now,
    logger: createLogger({ service: 'test', destination: createMemoryDestination() }),
  });
  const codeOf = (p: Promise<void>) =>
    p.then(
      () => 'ok',
      (err: unknown) => (err instanceof AppError ? err.code : String(err)),
    );
  return {
    gate,
    status,
    features,
    billable,
    codeOf,
    calls: () => calls,
    setDown: (d: boolean) => (down = d),
    advance: (ms: number) => (now += ms),
  };
}

describe('subscription gate (paid lanes)', () => {
  it('with billable, admits only a subscriber whose usage on the lane meter lands on an invoice', async () => {
    const t = setup();
    t.status['u1/prod'] = 'active';
    t.status['u2/prod'] = 'active';
    t.billable.add('u2/tokens');
    const lane = { ...P, billable: true, meter: 'tokens' };
    expect(await t.codeOf(t.gate.require('u1', lane))).toBe('subscription_required');
    expect(await t.codeOf(t.gate.require('u2', lane))).toBe('ok');
    // Without the billable requirement the active subscription alone was enough (the old check).
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('ok');
  });

  it('lets active and trialing subscribers in and refuses the rest with 402', async () => {
    const t = setup();
    t.status['u1/prod'] = 'active';
    t.status['u2/prod'] = 'trialing';
    t.status['u3/prod'] = 'past_due';
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('ok');
    expect(await t.codeOf(t.gate.require('u2', P))).toBe('ok');
    expect(await t.codeOf(t.gate.require('u3', P))).toBe('subscription_required');
    expect(await t.codeOf(t.gate.require('u4', P))).toBe('subscription_required');
  });

  it('caches answers for the TTL, shares concurrent lookups, and forgets on notice', async () => {
    const t = setup();
    t.status['u1/prod'] = 'active';
    await Promise.all([t.gate.require('u1', P), t.gate.require('u1', P)]);
    expect(t.calls()).toBe(1);
    t.status['u1/prod'] = 'canceled';
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('ok');
    t.gate.forget('u1');
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('subscription_required');
    t.status['u1/prod'] = 'active';
    t.advance(30_001);
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('ok');
  });

  it('does not cache an answer fetched before a notice arrived', async () => {
    const t = setup();
    t.status['u1/prod'] = 'active';
    const first = t.gate.require('u1', P);
    t.gate.forget('u1');
    t.status['u1/prod'] = 'canceled';
    // A request after the notice does not join the lookup started before it.
    const second = t.codeOf(t.gate.require('u1', P));
    await first;
    expect(await second).toBe('subscription_required');
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('subscription_required');
  });

  it('fails closed with 503 when payment cannot answer and nothing is cached; recovers after', async () => {
    const t = setup();
    t.setDown(true);
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('service_unavailable');
    t.setDown(false);
    t.status['u1/prod'] = 'active';
    expect(await t.codeOf(t.gate.require('u1', P))).toBe('ok');
  });

  it('a lane may require an entitlement feature instead of a product', async () => {
    const t = setup();
    t.features.add('u1/gpt-premium');
    expect(await t.codeOf(t.gate.require('u1', { entitlement: 'gpt-premium' }))).toBe('ok');
    expect(await t.codeOf(t.gate.require('u2', { entitlement: 'gpt-premium' }))).toBe(
      'subscription_required',
    );
    t.features.delete('u1/gpt-premium');
    t.gate.forget('u1');
    expect(await t.codeOf(t.gate.require('u1', { entitlement: 'gpt-premium' }))).toBe(
      'subscription_required',
    );
  });
});
