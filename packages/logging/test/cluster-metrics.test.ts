import { ClusterMetricsUnavailable, metricsFromPrimary } from '../src/cluster-metrics';

describe('metricsFromPrimary in the scraped worker', () => {
  const originalSend = process.send;
  afterEach(() => {
    process.send = originalSend;
  });

  it('answers a metric it cannot sum with ClusterMetricsUnavailable instead of throwing in the IPC listener', async () => {
    let asked: { id: number } | undefined;
    process.send = ((message: { id: number }) => {
      asked = message;
      return true;
    }) as typeof process.send;
    const scrape = metricsFromPrimary(2_000);
    expect(asked).toBeDefined();
    // What the primary relays: one worker's registry with a metric no aggregator is defined for.
    const unsummable = [{ name: 'x_total', help: 'x', type: 'counter', aggregator: 'nope', values: [] }];
    process.emit(
      'message',
      { type: 'platform:metrics-response', id: asked?.id, metrics: [unsummable] },
      undefined,
    );
    await expect(scrape).rejects.toBeInstanceOf(ClusterMetricsUnavailable);
  });

  it('sums what the workers reported', async () => {
    let asked: { id: number } | undefined;
    process.send = ((message: { id: number }) => {
      asked = message;
      return true;
    }) as typeof process.send;
    const scrape = metricsFromPrimary(2_000);
    const worker = [
      { name: 'x_total', help: 'x', type: 'counter', aggregator: 'sum', values: [{ value: 2, labels: {} }] },
    ];
    process.emit(
      'message',
      { type: 'platform:metrics-response', id: asked?.id, metrics: [worker, worker] },
      undefined,
    );
    expect(await scrape).toContain('x_total 4');
  });
});
