import { randomBytes } from 'node:crypto';
// Not a declared dependency: @platform/testing depends on this package (see backends.ts).
import { describeWith, needRedis, type TestServer } from '@platform/testing/servers';
import { Command } from 'ioredis';
import { createRedisStore, deletePrefixedKeys, type RedisKeyValueStore } from '../src';
import { busyScript } from './redis-busy';

const redisNeed = needRedis();

/** Holds the event loop, as a turn that runs long under a starved burst does. */
function blockLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** A reply that takes a starved host's Redis a few milliseconds. */
const BUSY_5_MS = busyScript(5);

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** ioredis's own timer field, which it clears when a command settles. */
const timerOf = (command: Command) =>
  (command as unknown as { _commandTimeoutTimer?: unknown })._commandTimeoutTimer;

describeWith(redisNeed)(
  'a Redis command time-out under a late event loop (redis-lag-tolerant-timeout.ts)',
  () => {
    let server: TestServer;
    let store: RedisKeyValueStore;

    beforeAll(async () => {
      server = await redisNeed.start();
    });
    afterAll(async () => {
      await server.close();
    });
    beforeEach(async () => {
      store = createRedisStore({
        url: server.url,
        keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
        commandTimeoutMs: 200,
      });
      await store.set('k', 'v');
    });
    afterEach(async () => {
      await store.close();
      await deletePrefixedKeys(store);
    });

    it('answers a command issued just before the loop stalls past its time-out (not yet written then)', async () => {
      const answer = store.get('k');
      blockLoop(500);
      await expect(answer).resolves.toBe('v');
    });

    it('answers a command whose reply came while the loop stalled, unread when its timer fired', async () => {
      const answer = store.get('k');
      await nextTurn(); // written, and answered by Redis within a millisecond
      blockLoop(500);
      await expect(answer).resolves.toBe('v');
    });

    it('answers a command issued just before the loop stalls past the give-up point (4 time-outs)', async () => {
      const answer = store.get('k');
      blockLoop(4 * 200 + 100);
      await expect(answer).resolves.toBe('v');
    });

    it('gives a command written only when a stall past the give-up point ends a round trip of a few ms', async () => {
      // Written when the stall ends, then the late timer gives up: the decision waits LATE_MS,
      // not one turn of the loop (~1 ms), for Redis to answer (CI saw this fail once under load).
      const answer = store.redis.eval(BUSY_5_MS, 0);
      blockLoop(4 * 200 + 100);
      await expect(answer).resolves.toBe(1);
    });

    it('answers a command whose reply came while the loop stalled past the give-up point (4 time-outs)', async () => {
      const answer = store.get('k');
      await nextTurn(); // written, and answered by Redis within a millisecond
      blockLoop(4 * 200 + 100); // the timer's first firing is already past giving up
      await expect(answer).resolves.toBe('v');
    });

    it('answers a script Redis ran while the loop stalled, so its effect is not reported as failed', async () => {
      const counted = store.incrWindow('n', 1, 60_000);
      blockLoop(500);
      await expect(counted).resolves.toMatchObject({ total: 1 });
    });

    it('leaves no timer behind: ioredis clears the re-armed one when the reply arrives', async () => {
      const command = new Command('get', [`${store.keyPrefix}k`], { replyEncoding: 'utf8' });
      const answer = store.redis.sendCommand(command);
      expect(timerOf(command)).toBeDefined();
      await nextTurn();
      blockLoop(500);
      await expect(answer).resolves.toBe('v');
      expect(timerOf(command)).toBeUndefined();
    });
  },
);
