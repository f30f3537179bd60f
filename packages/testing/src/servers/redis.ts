import { type ChildProcess, spawn } from 'node:child_process';
import { testServerUrls } from './env';
import type { Need, TestServer } from './need';
import type { PrivateServer } from './private-server';
import { canConnect, freePort, onPath, waitFor } from './process';

/** `redis-server` on a free port, without persistence. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child && child.exitCode === null) return;
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = proc;
    const failed = new Promise<boolean>((resolve) => proc.once('error', () => resolve(false)));
    await waitFor(() => Promise.race([canConnect(port), failed]), `redis-server on ${port}`);
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.pid === undefined) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, shared: false, start, stop, close: stop };
}

/** URLs of the servers fault tests stop (needRedis({ private: true })). */
const stoppable = new Set<string>();

/**
 * Whether a fault test may stop the Redis at `url`: its clients want the
 * product's short command time-outs (fast 503s), where on any other server a
 * CPU-starved machine should slow a test down, not fail it (createTestKv).
 */
export function isStoppableRedis(url: string): boolean {
  return stoppable.has(url);
}

export type NeedRedisOptions = {
  /**
   * A server of the file's own even when TEST_REDIS_URL is set: a fault test
   * stops and restarts it (PrivateServer.stop/start).
   */
  private?: boolean;
};

/**
 * Redis for a test: TEST_REDIS_URL when set (`shared`: write under unique
 * keys, e.g. createTestKv({ url })), else a private `redis-server` on a free
 * port, else the block from describeWith(needRedis()) is skipped in one line.
 */
export function needRedis(options: NeedRedisOptions & { private: true }): Need<PrivateServer>;
export function needRedis(options?: NeedRedisOptions): Need<TestServer>;
export function needRedis(options: NeedRedisOptions = {}): Need<TestServer> {
  const shared = options.private ? undefined : testServerUrls().redisUrl;
  const binary = onPath('redis-server');
  const missing =
    shared || binary
      ? undefined
      : options.private
        ? 'install redis-server: it stops and starts a server of its own'
        : 'set TEST_REDIS_URL, or install redis-server to let it start its own';
  return {
    kind: 'Redis',
    missing,
    async start() {
      if (shared) return { url: shared, shared: true, close: async () => {} };
      const server = await startPrivateRedis();
      if (options.private) stoppable.add(server.url);
      return server;
    },
  };
}
