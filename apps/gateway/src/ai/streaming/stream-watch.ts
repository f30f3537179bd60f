import { DRAIN_DEADLINE_EVENT } from '@platform/service-kit';

/** What the watch needs of the response: the server's drain-deadline event (SIGTERM). */
type DrainSource = {
  once(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
};

/**
 * A stream's two watchdogs: the idle timer (silence from upstream past
 * `idleMs` aborts the segment being read) and the server's drain deadline
 * (stop reading, end with `service_unavailable`). One timer per stream,
 * re-armed per chunk with refresh(): no timer churn at thousands of chunks a
 * second. Only silence from upstream counts: time spent waiting for a slow
 * client to drain re-arms it.
 */
export type StreamWatch = {
  /** The upstream request of the segment now read: aborted on idle or drain deadline. */
  follow(controller: AbortController): void;
  /** Waiting for upstream (true) or for anything else (false). */
  waiting(upstream: boolean): void;
  /** The segment now read went silent past the limit (reset by follow). */
  readonly stalled: boolean;
  /** The server's drain deadline passed. */
  readonly shuttingDown: boolean;
  close(): void;
};

export function watchStream(res: DrainSource, idleMs: number): StreamWatch {
  let controller: AbortController | null = null;
  let awaitingUpstream = false;
  let stalled = false;
  let shuttingDown = false;
  const onDrainDeadline = () => {
    shuttingDown = true;
    controller?.abort();
  };
  res.once(DRAIN_DEADLINE_EVENT, onDrainDeadline);
  const timer = setTimeout(() => {
    if (!awaitingUpstream) {
      timer.refresh();
      return;
    }
    stalled = true;
    controller?.abort();
  }, idleMs);
  return {
    follow(next) {
      controller = next;
      stalled = false;
      awaitingUpstream = false;
    },
    waiting(upstream) {
      awaitingUpstream = upstream;
      if (upstream) timer.refresh();
    },
    get stalled() {
      return stalled;
    },
    get shuttingDown() {
      return shuttingDown;
    },
    close() {
      clearTimeout(timer);
      res.off(DRAIN_DEADLINE_EVENT, onDrainDeadline);
    },
  };
}
