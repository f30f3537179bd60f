import { createMemoryStore } from '@platform/db';
import { isAppError } from '@platform/errors';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { createBudgets, GateRefusedError } from './budgets';
import { createMemoryCounterStore } from './counter-store-memory';
import type { BudgetRule } from './rules';

const logger = createLogger({ service: 'test', destination: createMemoryDestination() });
const NOON = Date.UTC(2026, 10, 25, 12, 0, 0);

function setup(defaults: { limit: number }[] = [{ limit: 100 }], rules: BudgetRule[] = []) {
  let now = NOON;
  const store = createMemoryCounterStore(() => now);
  const budgets = createBudgets({
    store,
    defaults: defaults.map((d) => ({ scope: 'user', period: 'daily', unit: 'tokens', limit: d.limit })),
    loadUserRules: async () => rules,
    logger,
    now: () => now,
  });
  return { budgets, store, setNow: (t: number) => (now = t) };
}

const ask = (over: Partial<Parameters<ReturnType<typeof createBudgets>['reserve']>[0]> = {}) => ({
  userId: 'u1',
  apiKeyId: 'k1',
  projectId: 'p1',
  promptTokens: 4,
  completionTokens: 4,
  price: undefined,
  ...over,
});

describe('budgets (memory counters)', () => {
  it('reserves before and settles to the actual afterwards', async () => {
    const { budgets } = setup();
    const r = await budgets.reserve(ask({ completionTokens: 20 }));
    expect((await budgets.today('u1')).used).toBe(24);
    await r.settle({ totalTokens: 10, costMicros: 0 });
    expect((await budgets.today('u1')).used).toBe(10);
    // A second settle changes nothing.
    await r.settle({ totalTokens: 99, costMicros: 0 });
    expect((await budgets.today('u1')).used).toBe(10);
  });

  it('requests in flight hold their share: a burst is refused once the budget is reserved', async () => {
    const { budgets } = setup();
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => budgets.reserve(ask())));
    const admitted = results.filter((r) => r.status === 'fulfilled');
    // 8 tokens each against 100: twelve fit; the 4 left cannot hold a prompt of 4 and a completion token.
    expect(admitted).toHaveLength(12);
    expect((await budgets.today('u1')).used).toBe(96);
    const refused = results.find((r) => r.status === 'rejected');
    expect(refused?.status === 'rejected' && isAppError(refused.reason) && refused.reason.status).toBe(429);
  });

  it('caps the completion of a request admitted at the edge to what is left', async () => {
    const { budgets } = setup();
    await budgets.reserve(ask({ completionTokens: 86 })); // 90 reserved
    const edge = await budgets.reserve(ask({ completionTokens: 4000 }));
    // 10 tokens left, 4 of them the prompt: at most 6 completion tokens.
    expect(edge.completionCap).toBe(6);
  });

  it('refuses a request whose prompt and one completion token do not fit in what is left', async () => {
    const { budgets } = setup();
    await budgets.reserve(ask({ completionTokens: 91 })); // 95 reserved, 5 left
    await expect(budgets.reserve(ask({ promptTokens: 5, completionTokens: 100 }))).rejects.toMatchObject({
      status: 429,
    });
    const edge = await budgets.reserve(ask({ promptTokens: 4, completionTokens: 100 }));
    expect(edge.completionCap).toBe(1);
    expect((await budgets.today('u1')).used).toBe(100);
  });

  it('refusal names the budget and waits until the window resets', async () => {
    const { budgets } = setup([{ limit: 10 }]);
    const r = await budgets.reserve(ask());
    await r.settle({ totalTokens: 12, costMicros: 0 });
    const err = await budgets.reserve(ask()).catch((e: unknown) => e);
    expect(isAppError(err) && err.details).toEqual([
      { path: 'budget.user.daily.tokens', message: 'daily tokens budget of user (10 tokens) is spent' },
    ]);
    expect(isAppError(err) && err.headers?.['Retry-After']).toBe(String(12 * 3600));
  });

  it("a user's own budget can only lower a default; project budgets are per project", async () => {
    const rules: BudgetRule[] = [
      { scope: 'user', subject: '', period: 'daily', unit: 'tokens', limit: 1000 },
      { scope: 'project', subject: 'p1', period: 'monthly', unit: 'tokens', limit: 8 },
    ];
    const { budgets } = setup([{ limit: 100 }], rules);
    expect((await budgets.today('u1')).budget).toBe(100);
    await (await budgets.reserve(ask())).settle({ totalTokens: 8, costMicros: 0 });
    await expect(budgets.reserve(ask())).rejects.toMatchObject({ status: 429 });
    await expect(budgets.reserve(ask({ projectId: 'p2' }))).resolves.toBeDefined();
  });

  it('counts only the budgets in force and the daily tokens; a budget set later is seeded', async () => {
    const rules: BudgetRule[] = [];
    const { budgets, store } = setup([{ limit: 100 }], rules);
    await (await budgets.reserve(ask())).settle({ totalTokens: 8, costMicros: 3 });
    const project = { scope: 'project', subject: 'p1', period: 'monthly', unit: 'tokens' } as const;
    const projectKey = 'budget:tokens:project:u1:p1:2026-11';
    expect(
      await store.read([projectKey, 'budget:tokens:u1:2026-11-25', 'budget:cost:u1:2026-11-25']),
    ).toEqual([0, 8, 0]);
    expect(await budgets.isCounted('u1', project)).toBe(false);
    expect(await budgets.isCounted('u1', { ...project, scope: 'user', subject: '', period: 'daily' })).toBe(
      true,
    );
    const windows: unknown[] = [];
    await budgets.seed('u1', project, async (w) => {
      windows.push(w);
      return 8;
    });
    expect(windows).toEqual([
      { label: '2026-11', startsAt: Date.UTC(2026, 10, 1), endsAt: Date.UTC(2026, 11, 1) },
    ]);
    rules.push({ ...project, limit: 12 });
    budgets.invalidate('u1');
    expect(await budgets.isCounted('u1', project)).toBe(true);
    // 4 left of the project's 12: a prompt of 4 does not fit with a completion token; one of 2 gets 2.
    await expect(budgets.reserve(ask({ completionTokens: 100 }))).rejects.toMatchObject({
      details: [{ path: 'budget.project.monthly.tokens', message: expect.any(String) }],
    });
    const r = await budgets.reserve(ask({ promptTokens: 2, completionTokens: 100 }));
    expect(r.completionCap).toBe(2);
  });

  it("one user's requests share one read of stale rules, which a failure or a change cannot corrupt", async () => {
    const project = { scope: 'project', subject: 'p1', period: 'monthly', unit: 'tokens' } as const;
    let rules: BudgetRule[] = [];
    let reads = 0;
    let gate: { fail: boolean; wait?: Promise<void> } = { fail: false };
    const destination = createMemoryDestination();
    let now = NOON;
    const budgets = createBudgets({
      store: createMemoryCounterStore(() => now),
      defaults: [{ scope: 'user', period: 'daily', unit: 'tokens', limit: 1_000_000 }],
      loadUserRules: async () => {
        reads += 1;
        const seen = rules;
        await gate.wait;
        if (gate.fail) throw new Error('timeout exceeded when trying to connect');
        return seen;
      },
      logger: createLogger({ service: 'test', destination }),
      now: () => now,
      cacheMs: 5000,
    });
    const hasProject = async () => (await budgets.list('u1')).some((r) => r.scope === 'project');
    expect(await hasProject()).toBe(false);
    expect(reads).toBe(1);

    // Stale: 200 requests at once make one read, not 200.
    now += 5000;
    rules = [{ ...project, limit: 50 }];
    const counted = await Promise.all(Array.from({ length: 200 }, () => hasProject()));
    expect(reads).toBe(2);
    expect(counted.every(Boolean)).toBe(true);

    // Stale and Postgres refusing: every waiter keeps the last rules, one read and one warning.
    now += 5000;
    gate = { fail: true };
    rules = [];
    const kept = await Promise.all(Array.from({ length: 100 }, () => hasProject()));
    expect(reads).toBe(3);
    expect(kept.every(Boolean)).toBe(true);
    const warned = destination.lines.filter((l) => l.includes('budget rules not reloaded'));
    expect(warned).toHaveLength(1);

    // A change while a stale read is in flight: that read's rules are not kept.
    now += 5000;
    let release = () => {};
    gate = { fail: false, wait: new Promise<void>((r) => (release = r)) };
    rules = [{ ...project, limit: 50 }];
    const before = hasProject();
    rules = [];
    budgets.invalidate('u1');
    gate = { fail: false };
    expect(await hasProject()).toBe(false);
    release();
    expect(await before).toBe(true);
    expect(await hasProject()).toBe(false);
    expect(reads).toBe(5);
  });

  it('a new UTC day starts a new daily window', async () => {
    const { budgets, setNow } = setup([{ limit: 10 }]);
    await (await budgets.reserve(ask())).settle({ totalTokens: 10, costMicros: 0 });
    await expect(budgets.reserve(ask())).rejects.toMatchObject({ status: 429 });
    setNow(NOON + 86_400_000);
    await expect(budgets.reserve(ask())).resolves.toBeDefined();
  });

  it('a gated reservation checks the key marker, then one rate hit, before any budget (memory store)', async () => {
    let now = NOON;
    const kv = createMemoryStore({ now: () => now });
    const budgets = createBudgets({
      store: createMemoryCounterStore(() => now, kv),
      defaults: [{ scope: 'user', period: 'daily', unit: 'tokens', limit: 100 }],
      loadUserRules: async () => [],
      logger,
      now: () => now,
    });
    const gate = { markerKey: 'marker:k1', rate: { key: 'rl:ai:key:k1', max: 2, windowMs: 60_000 } };
    const refusal = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (err) {
        if (err instanceof GateRefusedError) return err.verdict;
        throw err;
      }
      return 'admitted';
    };
    expect(await refusal(budgets.reserve(ask(), gate))).toBe('admitted');
    expect(await refusal(budgets.reserve(ask(), gate))).toBe('admitted');
    expect(await refusal(budgets.reserve(ask(), gate))).toEqual({ refused: 'rate', resetMs: 60_000 });
    // Refused by the gate: nothing reserved for it.
    expect((await budgets.today('u1')).used).toBe(16);
    now += 60_000;
    await kv.set('marker:k1', '1', 1000);
    expect(await refusal(budgets.reserve(ask(), gate))).toEqual({ refused: 'revoked' });
    expect((await budgets.today('u1')).used).toBe(16);
  });
});
