import { createHttpMetrics } from '@platform/logging';
import { batchedCounter } from './batched-counter';

// Sums kept per label set and handed to prom-client at scrape time.

function setup() {
  const { registry } = createHttpMetrics({ service: 't', defaultMetrics: false });
  const counter = batchedCounter({
    name: 'calls_total',
    help: 'calls',
    labelNames: ['lane', 'status'] as const,
    registers: [registry],
  });
  const read = async () => {
    const metric = registry.getSingleMetric('calls_total');
    if (!metric) throw new Error('not registered');
    const { values } = await metric.get();
    return values.map((v) => ({ lane: v.labels.lane, status: v.labels.status, value: v.value }));
  };
  return { counter, read };
}

describe('batchedCounter', () => {
  it('adds go into the counter when it is read, one series per key set', async () => {
    const { counter, read } = setup();
    const labels = (lane: string, status: number) => () => ({ lane, status: String(status) });
    counter.add(1, labels('free', 200), 'free', 200);
    counter.add(2, labels('free', 200), 'free', 200);
    counter.add(1, labels('free', 500), 'free', 500);
    counter.add(5, labels('paid', 200), 'paid', 200);
    expect(await read()).toEqual(
      expect.arrayContaining([
        { lane: 'free', status: '200', value: 3 },
        { lane: 'free', status: '500', value: 1 },
        { lane: 'paid', status: '200', value: 5 },
      ]),
    );
    expect(await read()).toHaveLength(3);
  });

  it('labels are built only the first time a key set is seen', () => {
    const { counter } = setup();
    const labels = jest.fn(() => ({ lane: 'free', status: '200' }));
    counter.add(1, labels, 'free', 200);
    counter.add(1, labels, 'free', 200);
    counter.add(1, labels, 'free', 200);
    expect(labels).toHaveBeenCalledTimes(1);
  });

  it('a second read adds only what came since the first, never twice', async () => {
    const { counter, read } = setup();
    const labels = () => ({ lane: 'free', status: '200' });
    counter.add(4, labels, 'free', 200);
    expect(await read()).toEqual([{ lane: 'free', status: '200', value: 4 }]);
    expect(await read()).toEqual([{ lane: 'free', status: '200', value: 4 }]);
    counter.add(1, labels, 'free', 200);
    expect(await read()).toEqual([{ lane: 'free', status: '200', value: 5 }]);
  });

  it('a key prefix is a series of its own, apart from the longer key set', async () => {
    const { counter, read } = setup();
    counter.add(1, () => ({ lane: 'free', status: 'none' }), 'free');
    counter.add(2, () => ({ lane: 'free', status: '200' }), 'free', 200);
    expect(await read()).toEqual(
      expect.arrayContaining([
        { lane: 'free', status: 'none', value: 1 },
        { lane: 'free', status: '200', value: 2 },
      ]),
    );
  });

  it('a number key and its string are different series', async () => {
    const { counter, read } = setup();
    counter.add(1, () => ({ lane: 'n', status: '200' }), 'x', 200);
    counter.add(1, () => ({ lane: 's', status: '200' }), 'x', '200');
    expect(await read()).toHaveLength(2);
  });
});
