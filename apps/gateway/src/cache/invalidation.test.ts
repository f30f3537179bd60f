import { createMemoryStore, type KeyValueStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { createInvalidationChannel } from './invalidation';

// Two instances on one store: what one publishes the other drops, and a
// store that fails is logged, retried, and never fails the caller.

function instance(kv: KeyValueStore) {
  const dropped: string[] = [];
  const logs = createMemoryDestination();
  const channel = createInvalidationChannel({
    kv,
    logger: createLogger({ service: 'test', level: 'warn', destination: logs }),
    channel: 'test:invalidate',
    drop: (key) => dropped.push(key),
  });
  return { channel, dropped, logs };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('invalidation channel', () => {
  it("delivers a publish to every subscribed instance's drop", async () => {
    const kv = createMemoryStore();
    const a = instance(kv);
    const b = instance(kv);
    a.channel.ensureSubscribed();
    b.channel.ensureSubscribed();
    await settle();
    await a.channel.publish('user-1');
    await settle();
    expect(a.dropped).toEqual(['user-1']);
    expect(b.dropped).toEqual(['user-1']);
    await a.channel.close();
    await b.channel.close();
    await kv.close();
  });

  it('logs a failed subscribe and subscribes again on the next use', async () => {
    const kv = createMemoryStore();
    let failures = 1;
    const flaky: KeyValueStore = {
      ...kv,
      subscribe: (channel, handler) =>
        failures-- > 0 ? Promise.reject(new Error('store down')) : kv.subscribe(channel, handler),
    };
    const b = instance(flaky);
    b.channel.ensureSubscribed();
    await settle();
    expect(b.logs.text()).toContain('cache invalidation subscribe failed');
    b.channel.ensureSubscribed();
    await settle();
    await instance(kv).channel.publish('k');
    await settle();
    expect(b.dropped).toEqual(['k']);
    await b.channel.close();
    await kv.close();
  });

  it('logs a failed publish and resolves anyway', async () => {
    const kv = createMemoryStore();
    const broken: KeyValueStore = { ...kv, publish: () => Promise.reject(new Error('store down')) };
    const a = instance(broken);
    await expect(a.channel.publish('k')).resolves.toBeUndefined();
    expect(a.logs.text()).toContain('cache invalidation not broadcast');
    await kv.close();
  });
});
