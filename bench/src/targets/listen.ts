import type { Server } from 'node:http';

/** A service listening on loopback, as the integration harnesses' listen() does. */
export type Listening = { url: string; close(): Promise<void> };

/** The part of an Express app used here (bench does not depend on express itself). */
export type Listenable = { listen(port: number, host: string): Server };

export async function listenOnLoopback(app: Listenable): Promise<Listening> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The fakes keep every request (with its parsed body) for tests to inspect; at
 * thousands of requests per second with 1 MB bodies that is gigabytes. This
 * empties the log every 200 ms and keeps only the count.
 */
export function trimRequestLog(log: unknown[]): { count(): number; stop(): void } {
  let trimmed = 0;
  const timer = setInterval(() => {
    trimmed += log.length;
    log.length = 0;
  }, 200);
  timer.unref();
  return { count: () => trimmed + log.length, stop: () => clearInterval(timer) };
}
