import { AsyncResource } from 'node:async_hooks';
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's old-generation growth while a process holds many open requests.
 *
 * After each full collection V8 lets the old generation grow to what survived
 * times a factor it picks from how fast collection is against allocation (up
 * to 4x on a host where Node gives the process a multi-gigabyte heap limit).
 * For a gateway serving short requests that is right: the live heap is small,
 * and a high factor means few full collections. For a burst of long-lived
 * streams it is not: each open stream holds ~35 KB of live objects, and with
 * the factor V8 picks, a worker at 1,000 streams carries as much garbage again
 * before it collects. Set for the whole life of a process, a fixed factor
 * (`--heap-growing-percent=20`) took 28-30 MB off the 2,000-stream peak but
 * cost loaded chat ~1.2x CPU per request (session 19): 32 connections of quick
 * chats keep at most a few dozen requests open per worker, and a small live
 * heap collected often is pure cost.
 *
 * So the factor is held low (1.1) only while a worker has `enterAt` or more
 * requests open, and given back to V8 when they fall to `leaveAt`. V8 reads
 * `heap_growing_percent` each time it sets the next limit (heap-controller.cc),
 * and Node leaves V8's flags writable after start (`v8.setFlagsFromString`), so
 * the change takes effect at the next collection. For the same reason the
 * low growth is kept until V8's next full collection after the surge: that
 * collection sets the limit the next burst meets, and with V8's own factor it
 * could be 4x what is live, which the next burst would fill with garbage
 * before the low growth applied again (back-to-back bursts of 2,500 streams
 * climbed 305, 347, 377, 435 MB that way). At 2,000 streams on two
 * workers this took the tree's peak from 290-376 MB to 259-266 MB, each
 * worker's old space at the peak from ~90 to ~41 MB committed
 * (bench/results/2026-11-30-issue46-s23.md).
 *
 * What a surge leaves behind is handed back too. V8 keeps the pages a burst
 * made it commit: a worker's heap stayed at ~90 MB committed with ~40 MB
 * live after four bursts of 1,000 streams, its resident memory never fell
 * between them, and each burst's peak stood on the last one's fragments (the
 * tree's 2,000-stream peak climbed 264, 297, 308, 313 MB over a run's
 * rounds). So `compactAfterMs` after a surge ends, if no new one has begun,
 * one compacting collection (V8's last-resort collection: full, moving live
 * objects together, unused pages returned to the system) takes the worker
 * back near its idle size, ~40 MB of resident memory each, and a regular one
 * then sets the next burst's first limit at twice what lives, and the peaks
 * stop climbing. It costs a pause per surge, with at most `leaveAt` requests
 * open (90-250 ms on a slow 2-vCPU host, for ~40 MB), and the next burst's
 * first chunks came ~1.15x later there, for a cause not found
 * (bench/results/2026-11-30-issue46-s28.md; HEAP_COMPACT_AFTER_SURGE_MS=0
 * turns it off). A surge that grew the heap's resident size
 * by less than `compactMinGrowthBytes` is not worth that pause and gets none.
 * An operator who sets
 * `--heap-growing-percent` in the node flags keeps it: the governor is off,
 * and with it this collection.
 */
export type HeapSurgeOptions = {
  /** Open requests at which growth is held at `growingPercent`. */
  enterAt: number;
  /** Open requests at which the surge ends (below `enterAt`, so a count near it does not flap); V8's own factor comes back after its next full collection. */
  leaveAt: number;
  /** The growth held during a surge, in percent of what survived the last full collection. */
  growingPercent: number;
  /** Sets V8 flags; tests pass a spy. */
  setFlags?: (flags: string) => void;
  /** Told on each change, for the log. */
  onChange?: (surging: boolean, open: number) => void;
  /** Calls `done` once, after V8's next full collection; returns a cancel. Tests pass a fake. */
  afterNextFullGc?: (done: () => void) => () => void;
  /** Milliseconds after a surge ends before the compacting collection, if no new surge began; 0 for none. */
  compactAfterMs?: number;
  /** The compacting collection runs only when the heap's resident size grew at least this much since the surge began. */
  compactMinGrowthBytes?: number;
  /** The heap's resident size in bytes; tests pass a fake. */
  heapResident?: () => number;
  /** Runs a full collection, compacting (pages returned) or regular; tests pass a spy. */
  collect?: (kind: CollectionKind) => void;
  /** Told after each compacting collection, for the log. */
  onCompact?: (outcome: { ms: number; rssBefore: number; rssAfter: number }) => void;
};

export const HEAP_SURGE_DEFAULTS = {
  enterAt: 128,
  leaveAt: 32,
  growingPercent: 10,
  compactAfterMs: 1000,
  compactMinGrowthBytes: 16 * 1024 * 1024,
} as const;

/** The governor's settings for runServer, with the operator's `HEAP_COMPACT_AFTER_SURGE_MS` (serviceEnvFields). */
export function heapSurgeSettings(env: {
  HEAP_COMPACT_AFTER_SURGE_MS: number;
}): Omit<HeapSurgeOptions, 'onChange' | 'onCompact'> {
  return { ...HEAP_SURGE_DEFAULTS, compactAfterMs: env.HEAP_COMPACT_AFTER_SURGE_MS };
}

export type HeapSurge = {
  /** Called with the number of requests open after one opened or closed. */
  update(open: number): void;
  readonly surging: boolean;
};

/** Whether the process's node flags (argv or NODE_OPTIONS) already set the heap's growth. */
export function growthSetByOperator(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  const named = (flag: string) => /^--heap[-_]growing[-_]percent(=|$)/.test(flag);
  return execArgv.some(named) || (nodeOptions ?? '').split(/\s+/).some(named);
}

export function heapSurge(opts: HeapSurgeOptions): HeapSurge {
  if (!(opts.leaveAt < opts.enterAt)) throw new RangeError('heapSurge: leaveAt must be below enterAt');
  const setFlags = opts.setFlags ?? setFlagsFromString;
  const afterNextFullGc = opts.afterNextFullGc ?? afterNextMarkCompact;
  const collect = opts.collect ?? collectGarbage;
  let surging = false;
  /** Set while the surge is over but the low growth waits for a full collection. */
  let cancelRelease: (() => void) | undefined;
  /** The compacting collection's timer, between a surge's end and the collection. */
  let compaction: NodeJS.Timeout | undefined;
  // The timer is set from a request's update: made in the governor's own async context
  // instead, the collection and its log line are not the request's (its id, its span).
  const ownContext = new AsyncResource('HeapSurge');
  const heapResident = opts.heapResident ?? residentHeap;
  /** The heap's resident size when the surge (or the first of surges with no collection between) began. */
  let residentAtStart: number | undefined;
  const compactNow = () => {
    compaction = undefined;
    const grown = heapResident() - (residentAtStart ?? 0);
    residentAtStart = undefined;
    // A small surge leaves little to hand back: no pause for it.
    if (grown < (opts.compactMinGrowthBytes ?? 0)) return;
    // The low growth ends here rather than at V8's next full collection.
    if (cancelRelease) {
      cancelRelease();
      cancelRelease = undefined;
    }
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    collect('compacting');
    // A collection asked to shrink the heap leaves a limit just above what lives (whatever the
    // growth flag says), and the next burst climbed from it through a full collection after
    // another: its first chunks came ~1.2x later than without the compaction. One regular
    // collection of the now small heap, with growth at 100 %, sets the limit at twice what
    // lives (a limit, not memory), and V8's own growth comes back after it.
    setFlags(`--heap-growing-percent=${REGROW_PERCENT}`);
    collect('regular');
    setFlags('--heap-growing-percent=0');
    opts.onCompact?.({ ms: performance.now() - started, rssBefore, rssAfter: process.memoryUsage.rss() });
  };
  return {
    update(open) {
      if (surging ? open > opts.leaveAt : open < opts.enterAt) return;
      surging = !surging;
      if (surging && residentAtStart === undefined && opts.compactAfterMs) residentAtStart = heapResident();
      if (surging && compaction) {
        clearTimeout(compaction);
        compaction = undefined;
      } else if (!surging && opts.compactAfterMs) {
        compaction = ownContext.runInAsyncScope(() => setTimeout(compactNow, opts.compactAfterMs));
        compaction.unref();
      }
      if (surging && cancelRelease) {
        // Still held from the last surge.
        cancelRelease();
        cancelRelease = undefined;
      } else if (surging) {
        setFlags(`--heap-growing-percent=${opts.growingPercent}`);
      } else {
        cancelRelease = afterNextFullGc(() => {
          cancelRelease = undefined;
          // 0 is V8's default: no fixed factor, its own choice at each collection.
          setFlags('--heap-growing-percent=0');
        });
      }
      opts.onChange?.(surging, open);
    },
    get surging() {
      return surging;
    },
  };
}

/** Calls `done` after the next full (mark-compact) collection V8 reports. */
export function afterNextMarkCompact(done: () => void): () => void {
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
      if (detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      observer.disconnect();
      done();
      return;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}

function residentHeap(): number {
  return getHeapStatistics().total_physical_size;
}

/** The growth of the regular collection after a compaction: the next burst's first limit, in percent of what lives. */
const REGROW_PERCENT = 100;

export type CollectionKind = 'compacting' | 'regular';

type Collector = (options?: { type?: 'major' | 'minor'; flavor?: 'regular' | 'last-resort' }) => void;
let collector: Collector | undefined;

/**
 * One full collection. `compacting` is V8's last-resort collection (what it
 * runs before giving up on an allocation): it moves live objects out of
 * fragmented pages and returns the emptied ones to the system. A `regular`
 * one (`gc()`) frees objects but keeps the pages. V8's `gc` function is taken
 * from a fresh context made while `--expose-gc` is briefly on, so the app's
 * own global never gains one.
 */
export function collectGarbage(kind: CollectionKind): void {
  if (!collector) {
    const own = (globalThis as { gc?: unknown }).gc;
    if (typeof own === 'function') collector = own as Collector;
    else {
      setFlagsFromString('--expose-gc');
      try {
        collector = runInNewContext('gc') as Collector;
      } finally {
        setFlagsFromString('--no-expose-gc');
      }
    }
  }
  collector({ type: 'major', flavor: kind === 'compacting' ? 'last-resort' : 'regular' });
}
