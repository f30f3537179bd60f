type JestHooks = {
  beforeAll(fn: () => Promise<void>, timeoutMs?: number): void;
  afterAll(fn: () => Promise<void>, timeoutMs?: number): void;
};

/**
 * Starting a harness opens a database (a PGlite snapshot or a new Postgres
 * database, migrated) and servers: seconds on an idle machine, but it took over
 * 30 s (jest's test time-out) on a shared 2-core machine under load, failing
 * whole files before their first test. A start that hangs still fails, later.
 */
const START_TIMEOUT_MS = 120_000;
const CLOSE_TIMEOUT_MS = 60_000;

/**
 * Starts something a whole test file shares (a harness, a server) before its
 * first test and closes it after its last. The returned object reads through
 * to it, so a file declares it once: `const h = perTestFile(startHarness);`.
 * Jest hooks: call it at the top level of a test file.
 */
export function perTestFile<T extends { close(): Promise<void> }>(start: () => Promise<T>): T {
  // The test runner's globals, looked up when called: this package is also loaded outside Jest (bench).
  const { beforeAll, afterAll } = globalThis as unknown as JestHooks;
  let started: T | undefined;
  let closed = false;
  beforeAll(async () => {
    const resource = await start();
    // The hook timed out and afterAll already ran: close what arrived late, or it
    // keeps jest alive (and, in band, breaks the next file).
    if (closed) await resource.close();
    else started = resource;
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    closed = true;
    await started?.close();
  }, CLOSE_TIMEOUT_MS);
  return new Proxy({} as T, {
    get(_target, prop) {
      if (!started) throw new Error('a per-file resource was used outside a test');
      // Read through without binding: harness functions are closures, and an Express app is itself a function.
      return Reflect.get(started, prop);
    },
  });
}
