import { Counter, type Registry } from '@platform/logging';

/** A label value as the caller has it (a status code stays a number). */
type Key = string | number;

/**
 * A labelled prom-client Counter for the request path. prom-client checks
 * and hashes a fresh labels object on every `inc`; here a request adds to its
 * series' running sum, found by the label values themselves through nested
 * Maps (the values come from the lanes config and constants, so their hashes
 * are cached: no string is built and nothing is allocated once a series
 * exists), and the sums go into the Counter when it is read (`collect`, run
 * by every /metrics scrape and cluster aggregation). The series are those
 * prom-client would hold: one per label set, from configured values only.
 */
export type BatchedCounter<L extends string> = {
  /**
   * Adds `by` to the series the keys name (up to four, in a fixed order per
   * call site); `labels` is called only the first time those keys are seen.
   */
  add(by: number, labels: () => Record<L, string>, k1: Key, k2?: Key, k3?: Key, k4?: Key): void;
};

type Node<L extends string> = {
  next: Map<Key, Node<L>> | undefined;
  series: { labels: Record<L, string>; pending: number } | undefined;
};

const node = <L extends string>(): Node<L> => ({ next: undefined, series: undefined });

function step<L extends string>(at: Node<L>, key: Key): Node<L> {
  at.next ??= new Map();
  let child = at.next.get(key);
  if (!child) {
    child = node();
    at.next.set(key, child);
  }
  return child;
}

export function batchedCounter<L extends string>(config: {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}): BatchedCounter<L> {
  const root = node<L>();
  const all: Array<{ labels: Record<L, string>; pending: number }> = [];
  new Counter<L>({
    ...config,
    collect() {
      for (const s of all) {
        if (s.pending === 0) continue;
        this.inc(s.labels, s.pending);
        s.pending = 0;
      }
    },
  });
  return {
    add(by, labels, k1, k2, k3, k4) {
      let at = step(root, k1);
      if (k2 !== undefined) at = step(at, k2);
      if (k3 !== undefined) at = step(at, k3);
      if (k4 !== undefined) at = step(at, k4);
      if (at.series) at.series.pending += by;
      else {
        at.series = { labels: labels(), pending: by };
        all.push(at.series);
      }
    },
  };
}
