import DataLoader from 'dataloader';

/**
 * Group commit: the calls made while one event-loop turn runs (every request
 * whose upstream answered in the same poll phase) go out as one call of
 * `run`, when the turn ends (setImmediate, the point where the Redis client
 * writes the turn's commands too: @platform/db redis-write-batching.ts). Each caller's promise settles with its batch:
 * resolved when `run` resolved, rejected with its error otherwise; `run`
 * may also reject single callers by returning an Error at their index.
 * DataLoader (without its cache) does the collecting; at most `maxBatch`
 * items per call.
 */
export function tickBatcher<T>(
  run: (items: readonly T[]) => Promise<undefined | readonly (Error | undefined)[]>,
  maxBatch = 256,
): (item: T) => Promise<void> {
  const loader = new DataLoader<T, true>(
    async (items) => {
      const outcomes = await run(items);
      return items.map((_, i) => outcomes?.[i] ?? (true as const));
    },
    { cache: false, maxBatchSize: maxBatch, batchScheduleFn: (callback) => setImmediate(callback) },
  );
  return async (item) => {
    await loader.load(item);
  };
}
