import { createMemoryStore } from './kv-memory';

describe('createMemoryStore with a controlled clock', () => {
  let t = 1_000_000;
  const store = createMemoryStore({ now: () => t });
  afterAll(() => store.close());

  it('expires values exactly at their ttl', async () => {
    await store.set('k', 'v', 100);
    t += 99;
    expect(await store.get('k')).toBe('v');
    t += 1;
    expect(await store.get('k')).toBeNull();
  });

  it('reports the time left in the window, which does not move on later increments', async () => {
    expect(await store.incrWindow('w', 1, 1000)).toEqual({ total: 1, resetMs: 1000 });
    t += 400;
    expect(await store.incrWindow('w', 1, 1000)).toEqual({ total: 2, resetMs: 600 });
    t += 600;
    expect(await store.incrWindow('w', 1, 1000)).toEqual({ total: 1, resetMs: 1000 });
  });

  it('a handler that unsubscribes another does not stop delivery to the rest', async () => {
    const received: string[] = [];
    const unsubscribeA = await store.subscribe('c', () => received.push('a'));
    await store.subscribe('c', () => {
      received.push('b');
      void unsubscribeA();
    });
    await store.publish('c', 'x');
    await new Promise((resolve) => setImmediate(resolve));
    expect(received.sort()).toEqual(['a', 'b']);
  });
});

describe('a closed memory store', () => {
  it('refuses operations', async () => {
    const store = createMemoryStore();
    await store.close();
    await expect(store.get('k')).rejects.toThrow('Key-value store is closed');
    await expect(store.publish('c', 'm')).rejects.toThrow('Key-value store is closed');
  });
});
