// Records every garbage collection's pause in a production process, to tell
// whether a latency tail is the collector's. Load it with
//   --gateway-node-args "--require <abs path>/bench/src/profile/gc-hook.cjs"
// (cluster workers inherit it) and set GC_HOOK_DIR; each process writes
// <dir>/gc-<pid>.json every 2 s and at exit: [startMs, kind, durationMs] per
// collection (kind as perf_hooks gives it: 1 minor/scavenge, 2 major,
// 4 incremental marking, 8 weak callbacks). Summarise with summarise-gc.ts.
const dir = process.env.GC_HOOK_DIR;
if (dir) {
  const fs = require('node:fs');
  const path = require('node:path');
  const { PerformanceObserver } = require('node:perf_hooks');
  const pauses = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      pauses.push([Math.round(e.startTime), e.detail?.kind ?? 0, Number(e.duration.toFixed(3))]);
  }).observe({ entryTypes: ['gc'] });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `gc-${process.pid}.json`);
  const write = () => {
    try {
      fs.writeFileSync(file, JSON.stringify(pauses));
    } catch {
      // the folder went away: nothing to keep
    }
  };
  setInterval(write, 2000).unref();
  process.on('exit', write);
}
