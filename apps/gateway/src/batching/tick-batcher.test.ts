import { tickBatcher } from './tick-batcher';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('tickBatcher', () => {
  it('runs the calls of one event-loop turn as one batch, in call order', async () => {
    const runs: number[][] = [];
    const add = tickBatcher<number>(async (items) => {
      runs.push([...items]);
    });
    await Promise.all([add(1), add(2), add(3)]);
    expect(runs).toEqual([[1, 2, 3]]);
  });

  it('calls made in different turns go in different batches', async () => {
    const runs: number[][] = [];
    const add = tickBatcher<number>(async (items) => {
      runs.push([...items]);
    });
    const first = add(1);
    await nextTurn();
    await Promise.all([first, add(2)]);
    expect(runs).toEqual([[1], [2]]);
  });

  it('rejects every caller of a failed batch with its error, and the next batch runs anew', async () => {
    let fail = true;
    const add = tickBatcher<number>(async () => {
      if (fail) throw new Error('store down');
    });
    const results = await Promise.allSettled([add(1), add(2)]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok'))).toEqual([
      'store down',
      'store down',
    ]);
    fail = false;
    await expect(add(3)).resolves.toBeUndefined();
  });

  it('splits a turn larger than maxBatch', async () => {
    const sizes: number[] = [];
    const add = tickBatcher<number>(async (items) => {
      sizes.push(items.length);
    }, 2);
    await Promise.all([1, 2, 3, 4, 5].map(add));
    expect(sizes).toEqual([2, 2, 1]);
  });
});
