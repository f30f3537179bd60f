import type { UsageEvent } from '@platform/contract';
import { createHttpMetrics, createLogger, createMemoryDestination } from '@platform/logging';
import type { BillableRow, BillingRules } from './events';
import { usageEventOf } from './events';
import { createShipperMetrics } from './metrics';
import { type CursorStore, createUsageShipper, type FeedPosition, type UsageSink } from './shipper';

const RULES: BillingRules = {
  quantity: 'total_tokens',
  meter: undefined,
  billByok: false,
  projectMeters: new Map([['p-cost', 'cost']]),
  lanes: { free: { mode: 'free' }, premium: { mode: 'paid', product: 'prod_x', quantity: 'cost_micros' } },
  media: undefined,
};

const row = (n: number, over: Partial<BillableRow> = {}): BillableRow => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  user_id: 'u1',
  project_id: 'p',
  endpoint: 'chat',
  lane: 'standard',
  total_tokens: 10 * n,
  cost_micros: 7 * n,
  byok: false,
  created_at: '2026-11-25T10:00:00.000Z',
  ...over,
});

/** The ledger as a list, the cursor and lease in memory: what the Postgres adapters do. */
function setup(rows: BillableRow[]) {
  const state = { cursor: 0n, owner: null as string | null };
  const cursor: CursorStore = {
    acquire: async (owner) => {
      if (state.owner && state.owner !== owner) return null;
      state.owner = owner;
      return { xid: 1n, seq: state.cursor };
    },
    advance: async (owner, to) => {
      if (state.owner !== owner) return false;
      state.cursor = to.seq;
      return true;
    },
    release: async (owner) => {
      if (state.owner === owner) state.owner = null;
    },
  };
  const feed = async (after: FeedPosition, limit: number) => {
    const page = rows.slice(Number(after.seq), Number(after.seq) + limit);
    return { rows: page, last: page.length ? { xid: 1n, seq: after.seq + BigInt(page.length) } : null };
  };
  const received: UsageEvent[] = [];
  let failures = 0;
  /** Values payment answers `refused` (as a payment with per-event answers does). */
  const refuse = new Set<number>();
  const payment: UsageSink = {
    recordUsageEvents: async ({ events }) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('connect ECONNREFUSED');
      }
      const seen = new Set(received.map((e) => e.id));
      const refused = events.filter((e) => refuse.has(e.value));
      const taken = events.filter((e) => !refuse.has(e.value));
      received.push(...taken.filter((e) => !seen.has(e.id)));
      return {
        stored: taken.filter((e) => !seen.has(e.id)).length,
        duplicates: taken.filter((e) => seen.has(e.id)).length,
        conflicts: 0,
        refused: refused.length,
        results: events.map((e) =>
          refuse.has(e.value)
            ? { id: e.id, outcome: 'refused', reason: 'timestamp_in_future', message: 'ahead' }
            : { id: e.id, outcome: seen.has(e.id) ? 'duplicate' : 'stored' },
        ),
      };
    },
  };
  const { registry } = createHttpMetrics({ service: 'test' });
  const logs = createMemoryDestination();
  const shipper = createUsageShipper({
    rules: RULES,
    feed,
    cursor,
    payment,
    logger: createLogger({ service: 'test', destination: logs }),
    clock: () => Date.parse('2026-11-25T10:00:30.000Z'),
    metrics: createShipperMetrics(registry),
    batchSize: 2,
    idleMs: 10,
    leaseMs: 1000,
    retryBaseMs: 5,
    retryMaxMs: 20,
  });
  return { shipper, state, received, failNext: (n: number) => (failures = n), registry, refuse, logs };
}

describe('usage events of ledger records', () => {
  it('bills tokens by default, the lane quantity when set, a project meter over the lane', () => {
    expect(usageEventOf(RULES, row(1)).event).toEqual({
      id: row(1).id,
      user_id: 'u1',
      value: 10,
      timestamp: '2026-11-25T10:00:00.000Z',
    });
    expect(usageEventOf(RULES, row(2, { lane: 'premium' })).event?.value).toBe(14);
    expect(usageEventOf(RULES, row(2, { project_id: 'p-cost' })).event?.meter).toBe('cost');
  });

  it('puts a model family on its own meter when configured: the longest prefix, a project meter over it', () => {
    const rules = {
      ...RULES,
      modelMeters: [
        ['gpt-4.1-mini', 'tokens_mini'],
        ['gpt-4.1', 'tokens_large'],
      ] as const,
    };
    expect(usageEventOf(rules, row(1, { model: 'gpt-4.1-2025-04-14' })).event?.meter).toBe('tokens_large');
    expect(usageEventOf(rules, row(1, { model: 'gpt-4.1-mini' })).event?.meter).toBe('tokens_mini');
    expect(usageEventOf(rules, row(1, { model: 'llama-3.3' })).event?.meter).toBeUndefined();
    expect(usageEventOf(rules, row(1, { model: 'gpt-4.1', project_id: 'p-cost' })).event?.meter).toBe('cost');
  });

  it('skips BYOK (default), free lanes, zero and oversized values', () => {
    expect(usageEventOf(RULES, row(1, { byok: true })).skip).toBe('byok');
    expect(usageEventOf({ ...RULES, billByok: true }, row(1, { byok: true })).event?.value).toBe(10);
    expect(usageEventOf(RULES, row(1, { lane: 'free' })).skip).toBe('free_lane');
    expect(usageEventOf(RULES, row(1, { total_tokens: 0 })).skip).toBe('zero');
    expect(usageEventOf(RULES, row(1, { total_tokens: 2 ** 31 })).skip).toBe('too_large');
  });
});

describe('usage events of media records', () => {
  const media = (endpoint: string, over: Partial<BillableRow> = {}) =>
    row(3, { endpoint, lane: null, total_tokens: 0, cost_micros: 40_000, ...over });

  it('bills an image or speech record (no tokens) by its cost, not skipped as zero', () => {
    expect(usageEventOf(RULES, media('image')).event?.value).toBe(40_000);
    expect(usageEventOf(RULES, media('tts')).event?.value).toBe(40_000);
    // media_billing's own quantity and meter still win.
    const own = {
      ...RULES,
      media: { mode: 'metered' as const, quantity: 'total_tokens' as const, meter: 'm' },
    };
    expect(usageEventOf(own, media('image')).skip).toBe('zero');
  });

  it("falls under media_billing whatever lane the request named: 'free' does not make an image free", () => {
    expect(usageEventOf(RULES, media('image', { lane: 'free' })).event?.value).toBe(40_000);
    const free = { ...RULES, media: { mode: 'free' as const } };
    expect(usageEventOf(free, media('music', { lane: 'premium' })).skip).toBe('free_lane');
  });
});

describe('usage shipper', () => {
  it('ships every billable record once, in batches, and advances the cursor past skipped ones', async () => {
    const rows = [row(1), row(2, { byok: true }), row(3), row(4, { lane: 'free' }), row(5)];
    const { shipper, state, received } = setup(rows);
    while (await shipper.runOnce()) {}
    expect(received.map((e) => e.value)).toEqual([10, 30, 50]);
    expect(state.cursor).toBe(5n);
  });

  it('moves the cursor past an event payment refused inside a good batch, counted and logged', async () => {
    const { shipper, state, received, refuse, registry, logs } = setup([row(1), row(2), row(3)]);
    refuse.add(20);
    while (await shipper.runOnce()) {}
    expect(received.map((e) => e.value)).toEqual([10, 30]);
    expect(state.cursor).toBe(3n);
    expect(await registry.metrics()).toMatch(
      /gateway_billing_events_refused_total\{[^}]*reason="timestamp_in_future"[^}]*\} 1\n/,
    );
    expect(logs.lines.some((l) => l.includes(row(2).id) && l.includes('timestamp_in_future'))).toBe(true);
  });

  it('keeps the cursor when payment fails, and resends the same batch after backoff', async () => {
    const { shipper, state, received, failNext, registry } = setup([row(1), row(2), row(3)]);
    failNext(2);
    await expect(shipper.runOnce()).rejects.toThrow('ECONNREFUSED');
    expect(state.cursor).toBe(0n);
    shipper.start();
    const deadline = Date.now() + 2000;
    while (received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await shipper.stop();
    expect(received.map((e) => e.value)).toEqual([10, 20, 30]);
    expect(state.cursor).toBe(3n);
    expect(state.owner).toBeNull();
    const text = await registry.metrics();
    expect(text).toMatch(/gateway_billing_ship_failures_total\{[^}]*\} 1\n/);
    expect(shipper.status().consecutiveFailures).toBe(0);
  });

  it('ships nothing while another process holds the lease', async () => {
    const { shipper, state, received } = setup([row(1)]);
    state.owner = 'someone-else';
    expect(await shipper.runOnce()).toBe(false);
    expect(received).toEqual([]);
    expect(shipper.status().active).toBe(false);
  });

  it('reports the age of the oldest unshipped record as lag', async () => {
    const { shipper, failNext } = setup([row(1)]);
    failNext(1);
    await expect(shipper.runOnce()).rejects.toThrow();
    expect(shipper.status().lagSeconds).toBe(30);
  });
});
