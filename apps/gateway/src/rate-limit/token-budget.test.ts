import { createMemoryStore, type KeyValueStore } from '@platform/db';
import { createLogger } from '@platform/logging';
import { CHARGE_DELAY_MS, createTokenBudget } from './token-budget';

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
  return { store, charges: () => calls.filter((c) => c.by !== 0) };
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
