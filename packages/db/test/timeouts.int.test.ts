import net from 'node:net';
import { createKeyValueStore, openDatabase, type RedisKeyValueStore } from '../src';

/** A server that accepts connections and never says a word: a hung Postgres or Redis. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Whether `promise` is still pending after `ms` (it is left running). */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return !settled;
}

describe('dependency time-outs are the caller’s (REDIS_COMMAND_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT_MS)', () => {
  it('a Postgres connection that never answers fails after connectTimeoutMs, not the default', async () => {
    const hung = await silentServer();
    const url = `postgresql://postgres@127.0.0.1:${hung.port}/none`;
    const short = await openDatabase({ url, connectTimeoutMs: 200 });
    const long = await openDatabase({ url, connectTimeoutMs: 20_000 });
    try {
      await expect(short.query('SELECT 1')).rejects.toThrow(/timeout/i);
      // Past the 1.5 s default, the raised bound still waits.
      const waiting = long.query('SELECT 1');
      waiting.catch(() => undefined);
      expect(await pendingAfter(waiting, 2_000)).toBe(true);
    } finally {
      // Hanging up first ends the long wait, so closing does not sit it out.
      await hung.close();
      await Promise.all([short.close(), long.close()]);
    }
  });

  it('a Redis command that is never answered fails after commandTimeoutMs, not the default', async () => {
    const hung = await silentServer();
    const url = `redis://127.0.0.1:${hung.port}`;
    const short = createKeyValueStore({ url, commandTimeoutMs: 200 });
    const long = createKeyValueStore({ url, commandTimeoutMs: 20_000 });
    try {
      await expect(short.get('k')).rejects.toThrow(/timed out|timeout/i);
      const waiting = long.get('k');
      waiting.catch(() => undefined);
      // Past the 750 ms default, the raised bound still waits.
      expect(await pendingAfter(waiting, 1_500)).toBe(true);
    } finally {
      // quit() would wait out the long bound on a server that never answers.
      for (const store of [short, long]) (store as RedisKeyValueStore).redis.disconnect();
      await hung.close();
    }
  });

  it('a Redis that never answers still fails a command while the event loop runs late throughout', async () => {
    const hung = await silentServer();
    const store = createKeyValueStore({ url: `redis://127.0.0.1:${hung.port}`, commandTimeoutMs: 100 });
    // Every turn of the loop runs 60 ms (a starved worker): every timer fires late.
    let busy = true;
    const spin = () => {
      const until = performance.now() + 60;
      while (performance.now() < until);
      if (busy) setImmediate(spin);
    };
    try {
      const started = performance.now();
      const answer = store.get('k');
      setImmediate(spin);
      await expect(answer).rejects.toThrow('Command timed out');
      const took = performance.now() - started;
      // Late timers wait again (redis-lag-tolerant-timeout.ts), but never past 4 time-outs, the
      // turns they fire late by, and LATE_MS (20) and a turn more to read what arrived before
      // failing; 250 ms of slack for a CI host running other suites (a timer that never gave up
      // would run into the test's time-out instead).
      expect(took).toBeGreaterThanOrEqual(100);
      expect(took).toBeLessThan(4 * 100 + 4 * 60 + 20 + 60 + 250);
    } finally {
      busy = false;
      (store as RedisKeyValueStore).redis.disconnect();
      await hung.close();
    }
  });
});
