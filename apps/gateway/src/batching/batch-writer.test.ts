import { type BatchWriterOptions, createBatchWriter } from './batch-writer';

function setup(overrides: Partial<BatchWriterOptions<number>> = {}) {
  const written: number[][] = [];
  const failures: Array<{ items: number; kind: string }> = [];
  let failNext = 0;
  const writer = createBatchWriter<number>({
    write: async (batch) => {
      if (failNext > 0) {
        failNext -= 1;
        throw new Error('database down');
      }
      written.push(batch);
    },
    maxDelayMs: 60_000,
    maxBatch: 3,
    maxBuffered: 5,
    retryFailed: true,
    onFailure: ({ items, kind }) => failures.push({ items, kind }),
    ...overrides,
  });
  return { writer, written, failures, failOnce: () => (failNext = 1) };
}

describe('batch writer', () => {
  it('writes nothing until flushed, then in batches of maxBatch', async () => {
    const { writer, written } = setup({ maxBatch: 10 });
    for (const n of [1, 2, 3, 4]) writer.add(n);
    expect(written).toEqual([]);
    await writer.flush();
    expect(written).toEqual([[1, 2, 3, 4]]);
  });

  it('a full batch starts a write at once', async () => {
    const { writer, written } = setup();
    for (const n of [1, 2, 3]) writer.add(n);
    // No flush and the timer is a minute away: only the full batch can have started this write.
    await new Promise((resolve) => setImmediate(resolve));
    expect(written[0]).toEqual([1, 2, 3]);
  });

  it('with retryFailed a failed batch goes out with the next flush, in order', async () => {
    const { writer, written, failures, failOnce } = setup({ maxBatch: 10 });
    failOnce();
    writer.add(1);
    await writer.flush();
    writer.add(2);
    await writer.flush();
    expect(written).toEqual([[1, 2]]);
    expect(failures).toEqual([{ items: 1, kind: 'write_failed' }]);
  });

  it('without retryFailed a failed batch is dropped', async () => {
    const { writer, written, failOnce } = setup({ maxBatch: 10, retryFailed: false });
    failOnce();
    writer.add(1);
    await writer.flush();
    writer.add(2);
    await writer.flush();
    expect(written).toEqual([[2]]);
  });

  it('beyond maxBuffered the oldest items are dropped and reported', async () => {
    const { writer, written, failures } = setup({ maxBatch: 100 });
    for (const n of [1, 2, 3, 4, 5, 6, 7]) writer.add(n);
    await writer.flush();
    expect(written).toEqual([[3, 4, 5, 6, 7]]);
    expect(failures).toEqual([
      { items: 1, kind: 'overflow' },
      { items: 1, kind: 'overflow' },
    ]);
  });

  it('after close nothing more is taken', async () => {
    const { writer, written } = setup({ maxBatch: 10 });
    writer.add(1);
    await writer.close();
    writer.add(2);
    await writer.flush();
    expect(written).toEqual([[1]]);
  });
});
