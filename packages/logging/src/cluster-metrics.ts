import cluster, { type Worker } from 'node:cluster';
import type { Registry } from 'prom-client';

/**
 * /metrics of a service running as cluster workers: the worker that gets the
 * scrape asks the primary, the primary asks every worker for its registry's
 * metrics (as JSON, over the cluster IPC channel) and hands the lot back, and
 * the asking worker sums them with prom-client's AggregatorRegistry.aggregate
 * and answers. The primary only relays: it never loads prom-client, which
 * cost it ~7.5 MB of resident memory from the first scrape on, on a tree that
 * issue 46 bounds (2,000 streams within 300 MB). Exposed on its own subpath
 * (`@platform/logging/cluster-metrics`) so the primary loads node built-ins only.
 */

const REQUEST = 'platform:metrics-request';
const RESPONSE = 'platform:metrics-response';
const COLLECT = 'platform:metrics-collect';
const COLLECTED = 'platform:metrics-collected';

/** A registry's metrics as `getMetricsAsJSON` gives them (opaque to the primary). */
type MetricsJson = unknown[];

type MetricsRequest = { type: typeof REQUEST; id: number };
type MetricsResponse = { type: typeof RESPONSE; id: number; metrics?: MetricsJson[]; error?: string };
type CollectRequest = { type: typeof COLLECT; id: number };
type Collected = { type: typeof COLLECTED; id: number; metrics?: MetricsJson; error?: string };

/** prom-client gives up on a silent worker after 5 s; so does the primary, and the asking worker waits a little longer. */
export const CLUSTER_METRICS_TIMEOUT_MS = 6000;
const COLLECT_TIMEOUT_MS = 5000;

/** Primary: answers a worker's metrics request with every worker's metrics, collected. */
export function serveClusterMetrics(): void {
  type Collection = {
    asker: Worker;
    askerId: number;
    metrics: MetricsJson[];
    waiting: Set<number>;
    timer: NodeJS.Timeout;
  };
  const collections = new Map<number, Collection>();
  let nextCollection = 0;

  const finish = (id: number, error?: string) => {
    const collection = collections.get(id);
    if (!collection) return;
    collections.delete(id);
    clearTimeout(collection.timer);
    const { asker, askerId, metrics } = collection;
    if (!asker.isConnected()) return;
    const reply: MetricsResponse =
      error === undefined ? { type: RESPONSE, id: askerId, metrics } : { type: RESPONSE, id: askerId, error };
    asker.send(reply);
  };

  cluster.on('message', (worker, message: MetricsRequest | Collected) => {
    if (message?.type === REQUEST) {
      const id = nextCollection++;
      const collection: Collection = {
        asker: worker,
        askerId: message.id,
        metrics: [],
        waiting: new Set(),
        timer: setTimeout(() => finish(id, 'Operation timed out.'), COLLECT_TIMEOUT_MS),
      };
      collections.set(id, collection);
      for (const each of Object.values(cluster.workers ?? {})) {
        // A worker that exited abruptly may still be listed, unable to answer.
        if (!each?.isConnected()) continue;
        collection.waiting.add(each.id);
        each.send({ type: COLLECT, id } satisfies CollectRequest);
      }
      if (collection.waiting.size === 0) finish(id);
      return;
    }
    if (message?.type === COLLECTED) {
      const collection = collections.get(message.id);
      if (!collection?.waiting.delete(worker.id)) return;
      if (message.error !== undefined) {
        finish(message.id, message.error);
        return;
      }
      if (message.metrics) collection.metrics.push(message.metrics);
      if (collection.waiting.size === 0) finish(message.id);
    }
  });
}

/** The registry this worker reports; set by reportToPrimary. */
let reported: Registry | undefined;

/**
 * Worker: makes `registry` the one the primary collects from (the app's
 * registry, not prom-client's global one) and starts answering its requests.
 * One registry per worker process: a second call replaces the first.
 */
export function reportToPrimary(registry: Registry): void {
  const first = reported === undefined;
  reported = registry;
  if (!first) return;
  process.on('message', (message: CollectRequest) => {
    if (message?.type !== COLLECT || !reported) return;
    const answer = (body: Omit<Collected, 'type' | 'id'>) =>
      process.send?.({ type: COLLECTED, id: message.id, ...body } satisfies Collected);
    reported.getMetricsAsJSON().then(
      (metrics) => answer({ metrics }),
      (err: unknown) => answer({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

function promClient(): typeof import('prom-client') {
  return require('prom-client') as typeof import('prom-client');
}

function unavailable(err: unknown): ClusterMetricsUnavailable {
  return new ClusterMetricsUnavailable(err instanceof Error ? err.message : String(err));
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
    let settled = false;
    const done = (err: Error | undefined, text?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (err) reject(err);
      else resolve(text ?? '');
    };
    const onMessage = (message: MetricsResponse) => {
      if (message?.type !== RESPONSE || message.id !== id) return;
      if (message.error !== undefined) {
        done(new ClusterMetricsUnavailable(message.error));
        return;
      }
      // In a try: aggregate throws on a metric it cannot sum, and a throw in an IPC listener ends the worker.
      try {
        const { AggregatorRegistry } = promClient();
        AggregatorRegistry.aggregate(
          (message.metrics ?? []) as Parameters<typeof AggregatorRegistry.aggregate>[0],
        )
          .metrics()
          .then(
            (text) => done(undefined, text),
            (err: unknown) => done(unavailable(err)),
          );
      } catch (err) {
        done(unavailable(err));
      }
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
