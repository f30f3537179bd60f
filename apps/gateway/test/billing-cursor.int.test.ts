import { createCursorStore } from '../src/billing/cursor-repo';
import { type AiHarness, useAiHarness } from './support/ai-harness';

/**
 * The shipper's cursor in Postgres (docs/billing.md): one lease holder at a
 * time across processes, a fenced advance, and a position that survives the
 * holder. Each test uses its own cursor name in the harness's database.
 */
let h: AiHarness;
useAiHarness({}, (state) => {
  ({ h } = state);
});

let n = 0;
const storeNamed = () => createCursorStore(h.sql, `test-${process.pid}-${++n}`);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('billing cursor store (Postgres)', () => {
  it('starts at the feed start and gives the lease to one owner at a time', async () => {
    const store = storeNamed();
    expect(await store.acquire('a', 60_000)).toEqual({ xid: 0n, seq: 0n });
    expect(await store.acquire('b', 60_000)).toBeNull();
    // The holder renews.
    expect(await store.acquire('a', 60_000)).toEqual({ xid: 0n, seq: 0n });
  });

  it('keeps the position for the next holder after a release', async () => {
    const store = storeNamed();
    await store.acquire('a', 60_000);
    expect(await store.advance('a', { xid: 42n, seq: 7n }, 60_000)).toBe(true);
    await store.release('a');
    expect(await store.acquire('b', 60_000)).toEqual({ xid: 42n, seq: 7n });
  });

  it('hands an expired lease over and fences the old holder out', async () => {
    const store = storeNamed();
    await store.acquire('a', 200);
    await pause(300);
    expect(await store.acquire('b', 60_000)).toEqual({ xid: 0n, seq: 0n });
    // The old holder wakes up after its lease: its advance writes nothing.
    expect(await store.advance('a', { xid: 9n, seq: 9n }, 60_000)).toBe(false);
    expect(await store.advance('b', { xid: 5n, seq: 5n }, 60_000)).toBe(true);
    await store.release('b');
    expect(await store.acquire('a', 60_000)).toEqual({ xid: 5n, seq: 5n });
  });

  it('lets exactly one of many concurrent acquirers win', async () => {
    const store = storeNamed();
    const owners = Array.from({ length: 8 }, (_, i) => `o${i}`);
    const results = await Promise.all(owners.map((o) => store.acquire(o, 60_000)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });
});
