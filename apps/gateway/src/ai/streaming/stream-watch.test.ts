import { EventEmitter } from 'node:events';
import { DRAIN_DEADLINE_EVENT } from '@platform/service-kit';
import { watchStream } from './stream-watch';

describe('watchStream (idle timer and drain deadline) on a fake clock', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('aborts the segment read when upstream is silent past the limit', () => {
    const watch = watchStream(new EventEmitter(), 1_000);
    const upstream = new AbortController();
    watch.follow(upstream);
    watch.waiting(true);
    jest.advanceTimersByTime(999);
    expect(upstream.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(upstream.signal.aborted).toBe(true);
    expect(watch.stalled).toBe(true);
    watch.close();
  });

  it('each chunk re-arms it; time spent on a slow client does not count', () => {
    const watch = watchStream(new EventEmitter(), 1_000);
    const upstream = new AbortController();
    watch.follow(upstream);
    for (let i = 0; i < 5; i++) {
      watch.waiting(true);
      jest.advanceTimersByTime(800);
      watch.waiting(false);
    }
    // Waiting for the client to drain, far past the limit.
    jest.advanceTimersByTime(5_000);
    expect(upstream.signal.aborted).toBe(false);
    // A new segment starts with a clean slate.
    watch.follow(new AbortController());
    expect(watch.stalled).toBe(false);
    watch.close();
  });

  it("the server's drain deadline aborts the read and says so; close lets go of both", () => {
    const res = new EventEmitter();
    const watch = watchStream(res, 1_000);
    const upstream = new AbortController();
    watch.follow(upstream);
    res.emit(DRAIN_DEADLINE_EVENT);
    expect(upstream.signal.aborted).toBe(true);
    expect(watch.shuttingDown).toBe(true);
    watch.close();
    expect(res.listenerCount(DRAIN_DEADLINE_EVENT)).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });
});
