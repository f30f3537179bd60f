import type { KeyValueStore } from '../src';
import { storeFactories } from './kv-stores';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the next message that fn's subscription delivers. */
function nextMessage(store: KeyValueStore, channel: string) {
  let resolveMessage: (message: string) => void = () => undefined;
  const message = new Promise<string>((resolve) => {
    resolveMessage = resolve;
  });
  return store.subscribe(channel, resolveMessage).then((unsubscribe) => ({ message, unsubscribe }));
}

describe.each(storeFactories)('KeyValueStore contract: $name', (factory) => {
  let store: KeyValueStore;
  beforeEach(async () => {
    store = await factory.create();
  });
  afterEach(async () => {
    await factory.drop(store);
  });

  it('reports its kind', () => {
    expect(store.kind).toBe(factory.name);
  });

  it('get of a missing key is null; set then get returns the value', async () => {
    expect(await store.get('missing')).toBeNull();
    await store.set('k', 'v');
    expect(await store.get('k')).toBe('v');
  });

  // TTLs read back before they expire are 400 ms: a host busy with other work once took
  // longer than 50 ms for three round trips (session 22's CI).
  it('a value set with a ttl expires', async () => {
    await store.set('k', 'v', 400);
    expect(await store.get('k')).toBe('v');
    await sleep(500);
    expect(await store.get('k')).toBeNull();
  });

  it('set without ttl replaces the value and removes an earlier expiry', async () => {
    await store.set('k', 'a', 50);
    await store.set('k', 'b');
    await sleep(120);
    expect(await store.get('k')).toBe('b');
  });

  it('setIfAbsent sets only a missing key and honours its ttl', async () => {
    expect(await store.setIfAbsent('k', 'first', 400)).toBe(true);
    expect(await store.setIfAbsent('k', 'second', 400)).toBe(false);
    expect(await store.get('k')).toBe('first');
    await sleep(500);
    expect(await store.setIfAbsent('k', 'third', 1000)).toBe(true);
    expect(await store.get('k')).toBe('third');
  });

  it('getDel returns the value once, even to concurrent callers', async () => {
    await store.set('code', 'secret', 10_000);
    const results = await Promise.all(Array.from({ length: 10 }, () => store.getDel('code')));
    expect(results.filter((r) => r === 'secret')).toHaveLength(1);
    expect(results.filter((r) => r === null)).toHaveLength(9);
    expect(await store.get('code')).toBeNull();
  });

  it('del removes a key and ignores a missing one', async () => {
    await store.set('k', 'v');
    await store.del('k');
    await store.del('k');
    expect(await store.get('k')).toBeNull();
  });

  it('incrWindow counts within a window that starts at the first increment', async () => {
    const first = await store.incrWindow('hits', 1, 10_000);
    expect(first).toEqual({ total: 1, resetMs: 10_000 });
    const second = await store.incrWindow('hits', 2, 10_000);
    expect(second.total).toBe(3);
    expect(second.resetMs).toBeGreaterThan(0);
    expect(second.resetMs).toBeLessThanOrEqual(10_000);
  });

  it('incrWindow starts a new window once the old one has passed', async () => {
    await store.incrWindow('hits', 5, 50);
    await sleep(120);
    expect((await store.incrWindow('hits', 1, 50)).total).toBe(1);
  });

  it('concurrent increments are atomic', async () => {
    const results = await Promise.all(Array.from({ length: 25 }, () => store.incrWindow('hits', 1, 10_000)));
    expect(results.map((r) => r.total).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
  });

  it('incrWindow gives a key stored without ttl an expiry', async () => {
    await store.set('n', '4');
    const result = await store.incrWindow('n', 1, 50);
    expect(result).toEqual({ total: 5, resetMs: 50 });
    await sleep(120);
    expect(await store.get('n')).toBeNull();
  });

  it('incrWindow on a non-numeric value fails', async () => {
    await store.set('text', 'abc');
    await expect(store.incrWindow('text', 1, 1000)).rejects.toThrow(/not an integer/);
  });

  it('rejects a ttl or window that is not positive, and a fractional increment', async () => {
    await expect(store.set('k', 'v', 0)).rejects.toThrow(RangeError);
    await expect(store.setIfAbsent('k', 'v', -1)).rejects.toThrow(RangeError);
    await expect(store.incrWindow('k', 1, Number.NaN)).rejects.toThrow(RangeError);
    await expect(store.incrWindow('k', 1.5, 1000)).rejects.toThrow(RangeError);
  });

  it('publish reaches every subscriber of the channel, and only of that channel', async () => {
    const a = await nextMessage(store, 'events');
    const b = await nextMessage(store, 'events');
    const other: string[] = [];
    const unsubscribeOther = await store.subscribe('other', (m) => other.push(m));
    await store.publish('events', 'hello');
    expect(await a.message).toBe('hello');
    expect(await b.message).toBe('hello');
    expect(other).toEqual([]);
    await Promise.all([a.unsubscribe(), b.unsubscribe(), unsubscribeOther()]);
  });

  it('an unsubscribed handler gets no more messages', async () => {
    const received: string[] = [];
    const unsubscribe = await store.subscribe('events', (m) => received.push(m));
    const witness = await nextMessage(store, 'events');
    await unsubscribe();
    await store.publish('events', 'after');
    expect(await witness.message).toBe('after');
    expect(received).toEqual([]);
    await witness.unsubscribe();
  });

  it('ping is true while open and false after close', async () => {
    expect(await store.ping()).toBe(true);
    await store.close();
    expect(await store.ping()).toBe(false);
  });
});
