import { AsyncLocalStorage } from 'node:async_hooks';
import { execFileSync } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  afterNextMarkCompact,
  growthSetByOperator,
  HEAP_SURGE_DEFAULTS,
  type HeapSurgeOptions,
  heapSurge,
} from '../src/heap-surge';
import { createGracefulShutdown } from '../src/server';

describe('heapSurge', () => {
  it('holds growth from enterAt, gives it back after the next full collection below leaveAt, and does not flap', () => {
    const flags: string[] = [];
    const changes: Array<[boolean, number]> = [];
    const waiting: Array<{ done: () => void; cancelled: boolean }> = [];
    const surge = heapSurge({
      enterAt: 256,
      leaveAt: 64,
      growingPercent: 20,
      setFlags: (f) => flags.push(f),
      onChange: (surging, open) => changes.push([surging, open]),
      afterNextFullGc: (done) => {
        const wait = { done, cancelled: false };
        waiting.push(wait);
        return () => {
          wait.cancelled = true;
        };
      },
    });
    for (let open = 1; open <= 300; open++) surge.update(open);
    expect(flags).toEqual(['--heap-growing-percent=20']);
    expect(surge.surging).toBe(true);
    // Down to just above leaveAt and back up past enterAt: one surge, no new flag.
    for (let open = 299; open >= 65; open--) surge.update(open);
    for (let open = 66; open <= 280; open++) surge.update(open);
    expect(flags).toHaveLength(1);
    expect(waiting).toHaveLength(0);
    // Below leaveAt: the low growth stays until V8's next full collection.
    for (let open = 279; open >= 0; open--) surge.update(open);
    expect(surge.surging).toBe(false);
    expect(flags).toEqual(['--heap-growing-percent=20']);
    expect(waiting).toHaveLength(1);
    // A new surge before that collection: still held, nothing to set, the wait cancelled.
    for (let open = 1; open <= 256; open++) surge.update(open);
    expect(waiting[0]?.cancelled).toBe(true);
    expect(flags).toEqual(['--heap-growing-percent=20']);
    for (let open = 255; open >= 0; open--) surge.update(open);
    expect(waiting).toHaveLength(2);
    waiting[1]?.done();
    expect(flags).toEqual(['--heap-growing-percent=20', '--heap-growing-percent=0']);
    expect(changes).toEqual([
      [true, 256],
      [false, 64],
      [true, 256],
      [false, 64],
    ]);
  });

  it('afterNextMarkCompact calls back after a real full collection, once', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let calls = 0;
    afterNextMarkCompact(() => {
      calls += 1;
    });
    gc();
    // Performance entries are delivered asynchronously.
    while (calls === 0) await new Promise((r) => setTimeout(r, 10));
    gc();
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(1);
    // Cancelled before any collection: never called.
    let cancelledCalls = 0;
    const cancel = afterNextMarkCompact(() => {
      cancelledCalls += 1;
    });
    cancel();
    gc();
    await new Promise((r) => setTimeout(r, 50));
    expect(cancelledCalls).toBe(0);
  });

  it('compacts outside the async context of the request whose end ended the surge', async () => {
    const store = new AsyncLocalStorage<string>();
    let seen: string | undefined = 'not run';
    const surge = store.run('governor-start', () =>
      heapSurge({
        enterAt: 2,
        leaveAt: 0,
        growingPercent: 10,
        compactAfterMs: 5,
        setFlags: () => {},
        afterNextFullGc: () => () => {},
        collect: () => {
          seen = store.getStore();
        },
      }),
    );
    surge.update(2);
    store.run('request-42', () => surge.update(0));
    for (let waited = 0; seen === 'not run' && waited < 2000; waited += 5)
      await new Promise((r) => setTimeout(r, 5));
    expect(seen).toBe('governor-start');
  });

  // What compaction is for: a plain full collection frees a burst's objects but keeps
  // their pages; a compacting collectGarbage moves what lives out of them and returns them. In a plain
  // node process (the built module), so Jest's own heap is not measured: ~60 MB of
  // objects of which 1 in 20 stays, then a full collection, then a compacting one.
  it('a compacting collectGarbage returns the pages a plain full collection keeps', () => {
    const built = path.resolve(__dirname, '../dist/heap-surge.js');
    const script = `
      const v8 = require('node:v8');
      const { collectGarbage } = require(${JSON.stringify(built)});
      const heap = () => v8.getHeapStatistics().total_heap_size;
      const kept = [];
      let all = [];
      for (let i = 0; i < 600000; i++) {
        const o = { a: i, b: 'x' + i, c: [i, i] };
        all.push(o);
        if (i % 20 === 0) kept.push(o);
      }
      all = null;
      globalThis.gc();
      const afterFull = { heap: heap(), rss: process.memoryUsage.rss() };
      collectGarbage('compacting');
      const afterCompact = { heap: heap(), rss: process.memoryUsage.rss() };
      process.stdout.write(JSON.stringify({ afterFull, afterCompact, kept: kept.length, globalGc: typeof globalThis.gc }));
    `;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--expose-gc', '--max-semi-space-size=8', '-e', script], {
        encoding: 'utf8',
      }),
    ) as {
      afterFull: { heap: number; rss: number };
      afterCompact: { heap: number; rss: number };
      kept: number;
    };
    const mb = 1048576;
    expect(out.kept).toBe(30000);
    // Measured: heap 97 -> 10 MB and resident 147 -> 61 MB (Node 24, session 28).
    expect(out.afterCompact.heap).toBeLessThan(out.afterFull.heap / 2);
    expect(out.afterFull.rss - out.afterCompact.rss).toBeGreaterThan(30 * mb);
  });

  it('collectGarbage gives the app no global gc', () => {
    const built = path.resolve(__dirname, '../dist/heap-surge.js');
    const script = `
      const { collectGarbage } = require(${JSON.stringify(built)});
      collectGarbage('compacting');
      collectGarbage('regular');
      const vm = require('node:vm');
      process.stdout.write(JSON.stringify([typeof globalThis.gc, vm.runInNewContext('typeof gc')]));
    `;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(['undefined', 'undefined']);
  });

  it('refuses a leave point that is not below the enter point', () => {
    expect(() => heapSurge({ enterAt: 10, leaveAt: 10, growingPercent: 20, setFlags: () => {} })).toThrow(
      RangeError,
    );
  });

  it("leaves an operator's own growth flag alone", () => {
    expect(growthSetByOperator(['--max-semi-space-size=8'], undefined)).toBe(false);
    expect(growthSetByOperator(['--heap-growing-percent=30'], undefined)).toBe(true);
    expect(growthSetByOperator(['--heap_growing_percent=30'], undefined)).toBe(true);
    expect(growthSetByOperator([], '--enable-source-maps --heap-growing-percent=10')).toBe(true);
    expect(growthSetByOperator([], '--heap-growing-percentage-typo')).toBe(false);
  });

  // What the governor relies on: V8 reads the flag at each collection, so
  // setting it after start changes when full collections come. The same
  // allocation (a live set of ~60 MB, one full collection to set the next
  // limit from it, then its objects replaced over and over, so that each
  // dies after promotion) with the growth held at 20 % runs more full
  // collections than with V8's own factor, and setting it at run time, then
  // back to 0, behaves as V8's own. The full collection before the churn
  // matters: without it the first limit comes from the heap's start-up size,
  // which on a host with a large heap limit (Node 24.22, 24 GB) let the whole
  // churn pass with one or two collections whatever the growth.
  it('changes when V8 runs full collections when set after start', () => {
    const script = `
      const v8 = require('node:v8');
      const mode = process.argv[1];
      if (mode === 'held') v8.setFlagsFromString('--heap-growing-percent=20');
      if (mode === 'given-back') {
        v8.setFlagsFromString('--heap-growing-percent=20');
        v8.setFlagsFromString('--heap-growing-percent=0');
      }
      const live = new Array(500000);
      for (let i = 0; i < 500000; i++) live[i] = { a: i, b: [i, i + 1] };
      globalThis.gc();
      for (let i = 0; i < 6000000; i++) live[(i * 7919) % 500000] = { a: i, b: [i, i + 1] };
    `;
    // --trace-gc prints a line per collection; full ones say Mark-Compact. One GC
    // thread: with concurrent marking on a busy host, a run can end before the
    // markers finish, and the count says nothing.
    const majors = (mode: string) =>
      execFileSync(
        process.execPath,
        ['--expose-gc', '--single-threaded-gc', '--trace-gc', '-e', script, mode],
        {
          encoding: 'utf8',
        },
      )
        .split('\n')
        .filter((line) => line.includes('Mark-Compact')).length;
    const own = majors('own');
    const held = majors('held');
    const givenBack = majors('given-back');
    // Own and given back 2-3, held 8-11 on session 26's host (the explicit collection counted
    // in each), but held 4 against own 2 in one bare CI run of session 27 (a margin of 3 failed
    // it): a flag V8 did not read would leave the counts equal, so more is the test.
    expect(held).toBeGreaterThan(own);
    expect(givenBack).toBeLessThan(held);
  });
});

describe('heapSurge: the compaction after a surge', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A governor with no V8 behind it, counting its compacting collections. */
  function counting(opts: Partial<HeapSurgeOptions> & Pick<HeapSurgeOptions, 'enterAt' | 'leaveAt'>) {
    const counted = { compactions: 0 };
    const surge = heapSurge({
      growingPercent: 10,
      setFlags: () => {},
      afterNextFullGc: () => () => {},
      collect: (kind) => {
        if (kind === 'compacting') counted.compactions += 1;
      },
      ...opts,
    });
    return { surge, counted };
  }

  it('compacts once, compactAfterMs after a surge ends, unless a new surge begins first', () => {
    const told: number[] = [];
    const { surge, counted } = counting({
      enterAt: 100,
      leaveAt: 20,
      compactAfterMs: 1000,
      onCompact: ({ ms }) => told.push(ms),
    });
    const rise = () => {
      for (let open = 1; open <= 100; open++) surge.update(open);
    };
    const fall = () => {
      for (let open = 99; open >= 0; open--) surge.update(open);
    };
    rise();
    jest.advanceTimersByTime(5000);
    expect(counted.compactions).toBe(0); // not while surging
    fall();
    jest.advanceTimersByTime(999);
    expect(counted.compactions).toBe(0);
    jest.advanceTimersByTime(1);
    expect(counted.compactions).toBe(1);
    expect(told).toHaveLength(1);
    jest.advanceTimersByTime(10_000);
    expect(counted.compactions).toBe(1); // once per surge
    // A new surge within the wait: no collection in the middle of it.
    fall();
    rise();
    jest.advanceTimersByTime(500);
    fall();
    jest.advanceTimersByTime(500);
    rise();
    jest.advanceTimersByTime(5000);
    expect(counted.compactions).toBe(1);
    fall();
    jest.advanceTimersByTime(1000);
    expect(counted.compactions).toBe(2);
  });

  it('compacts, then sets the next limit at twice what lives, then gives growth back to V8', () => {
    const steps: string[] = [];
    let cancelled = 0;
    const surge = heapSurge({
      enterAt: 10,
      leaveAt: 2,
      growingPercent: 10,
      compactAfterMs: 1000,
      setFlags: (f) => steps.push(f),
      afterNextFullGc: () => () => {
        cancelled += 1;
      },
      collect: (kind) => steps.push(kind),
    });
    surge.update(10);
    surge.update(0);
    jest.advanceTimersByTime(1000);
    expect(steps).toEqual([
      '--heap-growing-percent=10',
      'compacting',
      '--heap-growing-percent=100',
      'regular',
      '--heap-growing-percent=0',
    ]);
    expect(cancelled).toBe(1);
  });

  it('does not compact a heap with little to hand back', () => {
    let resident = 60 * 1024 * 1024;
    const { surge, counted } = counting({
      enterAt: 10,
      leaveAt: 2,
      compactAfterMs: 100,
      compactMinGrowthBytes: 16 * 1024 * 1024,
      heapResident: () => resident,
    });
    // A surge that grew the heap by 4 MB: nothing worth a pause.
    surge.update(10);
    resident += 4 * 1024 * 1024;
    surge.update(0);
    jest.advanceTimersByTime(1000);
    expect(counted.compactions).toBe(0);
    // One that grew it by 40 MB, in two surges with no collection between: compacted.
    surge.update(10);
    resident += 20 * 1024 * 1024;
    surge.update(0);
    jest.advanceTimersByTime(50);
    surge.update(10);
    resident += 20 * 1024 * 1024;
    surge.update(0);
    jest.advanceTimersByTime(1000);
    expect(counted.compactions).toBe(1);
  });

  it('compacts by default, and not at all with compactAfterMs 0', () => {
    expect(HEAP_SURGE_DEFAULTS.compactAfterMs).toBeGreaterThan(0);
    const { surge, counted } = counting({ enterAt: 10, leaveAt: 2, compactAfterMs: 0 });
    surge.update(10);
    surge.update(0);
    jest.advanceTimersByTime(60_000);
    expect(counted.compactions).toBe(0);
  });
});

describe('createGracefulShutdown onOpenCount', () => {
  let server: Server;
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is told the open requests as each opens and closes, aborted ones included', async () => {
    const held: Array<() => void> = [];
    server = createServer((req, res) => {
      if (req.url === '/slow') held.push(() => res.end('done'));
      else res.end('quick');
    });
    const counts: number[] = [];
    createGracefulShutdown(server, {
      logger: { info() {}, warn() {}, error() {} } as never,
      onClose: async () => {},
      exit: () => {},
      onOpenCount: (open) => counts.push(open),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const call = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request({ port, host: '127.0.0.1', path, agent: false }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(body));
        });
        req.on('error', reject);
        req.end();
      });
    const slow = [call('/slow'), call('/slow'), call('/slow')];
    while (held.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(Math.max(...counts)).toBe(3);
    // One client gives up: its response closes without finishing.
    const aborted = request({ port, host: '127.0.0.1', path: '/slow', agent: false });
    aborted.on('error', () => {});
    aborted.end();
    while (held.length < 4) await new Promise((r) => setTimeout(r, 5));
    expect(counts.at(-1)).toBe(4);
    aborted.destroy();
    while (counts.at(-1) !== 3) await new Promise((r) => setTimeout(r, 5));
    for (const end of held.slice(0, 3)) end();
    await expect(Promise.all(slow)).resolves.toEqual(['done', 'done', 'done']);
    expect(await call('/quick')).toBe('quick');
    while (counts.at(-1) !== 0) await new Promise((r) => setTimeout(r, 5));
    expect(counts).toEqual([1, 2, 3, 4, 3, 2, 1, 0, 1, 0]);
  });
});
