import { Counter, type Registry } from '@platform/logging';

/**
 * A labelled prom-client Counter for the request path. prom-client checks
 * and hashes the labels object on every `inc` (and allocates it); here a
 * request adds to its series' running sum, found by a key the caller builds
 * from the same values (one string, one Map lookup), and the sums go into
 * the Counter when it is read (`collect`, run by every /metrics scrape and
 * cluster aggregation). The series are those prom-client would hold: one per
 * label set, from configured values only.
 */
export type BatchedCounter<L extends string> = {
  /** Adds `by` to the series `key` names; `labels` is called only the first time the key is seen. */
  add(key: string, labels: () => Record<L, string>, by?: number): void;
};

type Series<L extends string> = { labels: Record<L, string>; pending: number };

export function batchedCounter<L extends string>(config: {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}): BatchedCounter<L> {
  const series = new Map<string, Series<L>>();
  new Counter<L>({
    ...config,
    collect() {
      for (const s of series.values()) {
        if (s.pending === 0) continue;
        this.inc(s.labels, s.pending);
        s.pending = 0;
      }
    },
  });
  return {
    add(key, labels, by = 1) {
      const s = series.get(key);
      if (s) s.pending += by;
      else series.set(key, { labels: labels(), pending: by });
    },
  };
}
