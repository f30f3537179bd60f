import cluster from 'node:cluster';
import type { AggregatorRegistry as Aggregator, Registry } from 'prom-client';

/**
 * /metrics of a service running as cluster workers: the worker that gets the
 * scrape asks the primary, the primary collects every worker's registry
 * (prom-client's AggregatorRegistry, over the cluster IPC channel) and answers
 * with the sum. Exposed on its own subpath (`@platform/logging/cluster-metrics`)
 * so the primary loads prom-client and node built-ins only.
 */

const REQUEST = 'platform:metrics-request';
const RESPONSE = 'platform:metrics-response';

type MetricsRequest = { type: typeof REQUEST; id: number };
type MetricsResponse = { type: typeof RESPONSE; id: number; text?: string; error?: string };

/** prom-client gives up on a silent worker after 5 s; the asking worker waits a little longer. */
export const CLUSTER_METRICS_TIMEOUT_MS = 6000;

/** Primary: answers workers' metrics requests with the aggregate of all workers. */
export function serveClusterMetrics(): void {
  // prom-client loads with the first scrape: an idle primary holds ~20 MB less (issue 46).
  let aggregator: Aggregator<'text/plain; version=0.0.4; charset=utf-8'> | undefined;
  cluster.on('message', (worker, message: MetricsRequest) => {
    if (message?.type !== REQUEST) return;
    if (aggregator === undefined) aggregator = new (promClient().AggregatorRegistry)();
    const reply = (body: Omit<MetricsResponse, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: RESPONSE, id: message.id, ...body });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

/**
 * Worker: makes `registry` the one the primary collects from (the app's
 * registry, not prom-client's global one) and starts answering its requests.
 * One registry per worker process: a second call replaces the first.
 */
export function reportToPrimary(registry: Registry): void {
  const { AggregatorRegistry } = promClient();
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener for the primary's collection requests.
  new AggregatorRegistry();
}

function promClient(): typeof import('prom-client') {
  return require('prom-client') as typeof import('prom-client');
}

/** Thrown when the primary did not answer in time or failed to collect. */
export class ClusterMetricsUnavailable extends Error {
  override readonly name = 'ClusterMetricsUnavailable';
}

let nextId = 0;

/** Worker: the whole service's metrics in Prometheus text format, from the primary. */
export function metricsFromPrimary(timeoutMs = CLUSTER_METRICS_TIMEOUT_MS): Promise<string> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const done = (err: Error | undefined, text?: string) => {
      clearTimeout(timer);
      process.off('message', onMessage);
      if (err) reject(err);
      else resolve(text ?? '');
    };
    const onMessage = (message: MetricsResponse) => {
      if (message?.type !== RESPONSE || message.id !== id) return;
      if (message.error !== undefined) done(new ClusterMetricsUnavailable(message.error));
      else done(undefined, message.text);
    };
    const timer = setTimeout(
      () => done(new ClusterMetricsUnavailable(`the primary did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    process.on('message', onMessage);
    if (!process.send) {
      done(new ClusterMetricsUnavailable('no IPC channel to the primary'));
      return;
    }
    process.send({ type: REQUEST, id } satisfies MetricsRequest, undefined, undefined, (err) => {
      if (err) done(new ClusterMetricsUnavailable(err.message));
    });
  });
}
