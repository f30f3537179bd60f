import { createMemoryStore, type KeyValueStore } from '@platform/db';
import { createLogger } from '@platform/logging';
import { CHARGE_DELAY_MS, createTokenBudget, READ_MAX_AGE_MS } from './token-budget';

const logger = createLogger({ service: 'test', level: 'silent' });
const NOON = Date.parse('2026-11-24T12:00:00Z');
const waitForCharges = () => new Promise((resolve) => setTimeout(resolve, CHARGE_DELAY_MS + 50));

/** The store, and the increments sent to it that are charges (reads add 0). */
function counting(kv: KeyValueStore) {
  const calls: Array<{ key: string; by: number }> = [];
  const store: KeyValueStore = {
    ...kv,
    incrWindow(key, by, windowMs) {
      calls.push({ key, by });
      return kv.incrWindow(key, by, windowMs);
    },
  };
  return {
    store,
    charges: () => calls.filter((c) => c.by !== 0),
    reads: () => calls.filter((c) => c.by === 0).length,
  };
}

describe('token budget charges', () => {
  it('go out within CHARGE_DELAY_MS as one increment per user and day, and every instance sees them', async () => {
    const kv = createMemoryStore();
    const { store, charges } = counting(kv);
    const budget = createTokenBudget({ kv: store, dailyTokens: 100, logger, now: () => NOON });
    budget.consume('u1', 30);
    budget.consume('u1', 40);
    budget.consume('u2', 5);
    expect(charges()).toEqual([]);
    await waitForCharges();
    expect(charges()).toEqual([
      { key: 'budget:tokens:u1:2026-11-24', by: 70 },
      { key: 'budget:tokens:u2:2026-11-24', by: 5 },
    ]);
    const other = createTokenBudget({ kv, dailyTokens: 100, logger, now: () => NOON });
    expect((await other.today('u1')).used).toBe(70);
    budget.consume('u1', 30);
    await waitForCharges();
    await expect(other.assertAvailable('u1')).rejects.toMatchObject({ status: 429 });
    await other.assertAvailable('u2');
    await budget.close();
  });

  it("are sent before this instance reads today's total, so a caller sees its own", async () => {
    const budget = createTokenBudget({ kv: createMemoryStore(), dailyTokens: 100, logger, now: () => NOON });
    budget.consume('u1', 9);
    expect((await budget.today('u1')).used).toBe(9);
    await budget.close();
  });

  it('count against the UTC day they were consumed in, even when sent after midnight', async () => {
    let now = Date.parse('2026-11-24T23:59:59.990Z');
    const { store, charges } = counting(createMemoryStore());
    const budget = createTokenBudget({ kv: store, dailyTokens: 100, logger, now: () => now });
    budget.consume('u1', 7);
    now += 20;
    budget.consume('u1', 2);
    expect(await budget.today('u1')).toMatchObject({ day: '2026-11-25', used: 2 });
    expect(charges()).toEqual([
      { key: 'budget:tokens:u1:2026-11-24', by: 7 },
      { key: 'budget:tokens:u1:2026-11-25', by: 2 },
    ]);
    await budget.close();
  });

  it('still waiting are sent and awaited on close', async () => {
    const kv = createMemoryStore();
    const budget = createTokenBudget({ kv, dailyTokens: 100, logger, now: () => NOON });
    budget.consume('u1', 9);
    await budget.close();
    const { total } = await kv.incrWindow('budget:tokens:u1:2026-11-24', 0, 60_000);
    expect(total).toBe(9);
  });

  it('that the store refuses are logged and dropped, and the next ones still go out', async () => {
    const kv = createMemoryStore();
    let fail = true;
    const store: KeyValueStore = {
      ...kv,
      incrWindow: (key, by, windowMs) =>
        fail && by !== 0 ? Promise.reject(new Error('store down')) : kv.incrWindow(key, by, windowMs),
    };
    const errors: unknown[] = [];
    const spyLogger = { error: (...args: unknown[]) => errors.push(args) } as unknown as typeof logger;
    const budget = createTokenBudget({ kv: store, dailyTokens: 100, logger: spyLogger, now: () => NOON });
    budget.consume('u1', 5);
    await budget.today('u1');
    expect(errors).toHaveLength(1);
    fail = false;
    budget.consume('u1', 6);
    expect((await budget.today('u1')).used).toBe(6);
    await budget.close();
  });
});

describe('token budget checks', () => {
  it('read the shared counter at most once per READ_MAX_AGE_MS per user, shared by concurrent checks', async () => {
    let now = NOON;
    const { store, reads } = counting(createMemoryStore());
    const budget = createTokenBudget({ kv: store, dailyTokens: 100, logger, now: () => now });
    await Promise.all([budget.assertAvailable('u1'), budget.assertAvailable('u1')]);
    expect(reads()).toBe(1);
    now += READ_MAX_AGE_MS - 1;
    await budget.assertAvailable('u1');
    expect(reads()).toBe(1);
    await budget.assertAvailable('u2');
    expect(reads()).toBe(2);
    now += 1;
    await budget.assertAvailable('u1');
    expect(reads()).toBe(3);
    // The clock stepped back: the reading is not taken as fresh.
    now -= 10_000;
    await budget.assertAvailable('u1');
    expect(reads()).toBe(4);
    await budget.close();
  });

  it("count this instance's own charges at once, sent or not", async () => {
    let now = NOON;
    const kv = createMemoryStore();
    await kv.incrWindow('budget:tokens:u1:2026-11-24', 40, 60_000);
    const budget = createTokenBudget({ kv, dailyTokens: 100, logger, now: () => now });
    await budget.assertAvailable('u1');
    budget.consume('u1', 30);
    await budget.assertAvailable('u1');
    budget.consume('u1', 30);
    // 40 read + 60 charged here, none of it sent yet: spent.
    await expect(budget.assertAvailable('u1')).rejects.toMatchObject({ status: 429 });
    // Once sent and read again, the shared counter holds it and nothing is counted twice.
    await waitForCharges();
    now += READ_MAX_AGE_MS;
    await expect(budget.assertAvailable('u1')).rejects.toMatchObject({ status: 429 });
    expect((await budget.today('u1')).used).toBe(100);
    await budget.close();
  });

  it('count charges made while a read is out, and those waiting to be sent when it went out', async () => {
    const kv = createMemoryStore();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const store: KeyValueStore = {
      ...kv,
      incrWindow: async (key, by, windowMs) => {
        if (by === 0) await gate;
        return kv.incrWindow(key, by, windowMs);
      },
    };
    const budget = createTokenBudget({ kv: store, dailyTokens: 100, logger, now: () => NOON });
    budget.consume('u1', 50);
    const first = budget.assertAvailable('u1');
    budget.consume('u1', 50);
    release();
    await expect(first).rejects.toMatchObject({ status: 429 });
    await budget.close();
  });

  it("see another instance's charges once their reading is READ_MAX_AGE_MS old", async () => {
    let now = NOON;
    const kv = createMemoryStore();
    const a = createTokenBudget({ kv, dailyTokens: 100, logger, now: () => now });
    const b = createTokenBudget({ kv, dailyTokens: 100, logger, now: () => now });
    await b.assertAvailable('u1');
    a.consume('u1', 100);
    await a.close();
    // b's reading is fresh and older than a's charge: the documented overshoot window.
    await b.assertAvailable('u1');
    now += READ_MAX_AGE_MS;
    await expect(b.assertAvailable('u1')).rejects.toMatchObject({ status: 429 });
    await b.close();
  });
});
