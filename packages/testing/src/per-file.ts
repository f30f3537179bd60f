type JestHooks = {
  beforeAll(fn: () => Promise<void>): void;
  afterAll(fn: () => Promise<void>): void;
};

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
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as T, {
    get(_target, prop) {
      if (!started) throw new Error('a per-file resource was used outside a test');
      // Read through without binding: harness functions are closures, and an Express app is itself a function.
      return Reflect.get(started, prop);
    },
  });
}
