import { ClusterMetricsUnavailable, metricsFromPrimary } from '../src/cluster-metrics';

describe('metricsFromPrimary in the scraped worker', () => {
  const originalSend = process.send;
  afterEach(() => {
    process.send = originalSend;
  });

  /** Starts a scrape, then answers it as the primary would, with these workers' registries. */
  function scrapeAnswered(metrics: unknown[]): Promise<string> {
    let asked: { id: number } | undefined;
    process.send = ((message: { id: number }) => {
      asked = message;
      return true;
    }) as typeof process.send;
    const scrape = metricsFromPrimary(2_000);
    expect(asked).toBeDefined();
    process.emit('message', { type: 'platform:metrics-response', id: asked?.id, metrics }, undefined);
    return scrape;
  }

  it('answers a metric it cannot sum with ClusterMetricsUnavailable instead of throwing in the IPC listener', async () => {
    // What the primary relays: one worker's registry with a metric no aggregator is defined for.
    const unsummable = [{ name: 'x_total', help: 'x', type: 'counter', aggregator: 'nope', values: [] }];
    const scrape = scrapeAnswered([unsummable]);
    await expect(scrape).rejects.toBeInstanceOf(ClusterMetricsUnavailable);
  });

  it('sums what the workers reported', async () => {
    const worker = [
      { name: 'x_total', help: 'x', type: 'counter', aggregator: 'sum', values: [{ value: 2, labels: {} }] },
    ];
    const scrape = scrapeAnswered([worker, worker]);
    expect(await scrape).toContain('x_total 4');
  });
});
