// Lets the idle-memory bench (src/peers/run-idle-rss.ts) read a production
// process after a full garbage collection. Load it with
//   --gateway-node-args "--require <abs path>/bench/src/profile/memory-hook.cjs"
// (cluster workers inherit it) and set MEMORY_HOOK_DIR. On SIGUSR2 the process
// collects all the garbage it can, then writes <dir>/memory-<pid>.json: its RSS and young
// generation before, process.memoryUsage() and the young generation after,
// and the modules it has loaded, counted per package (what to load later).
// MEMORY_HOOK_PEAK_MS=<ms>: also samples the process every <ms> and, each time its RSS
// passes its highest reading so far by 1 MB, writes <dir>/peak-<pid>.json: RSS, the
// heap's spaces, process.memoryUsage() (heap used/total, external, array buffers) and
// /proc/self/smaps_rollup at that moment (what the peak is made of, without a GC).
const dir = process.env.MEMORY_HOOK_DIR;
if (dir) {
  const fs = require('node:fs');
  const path = require('node:path');
  const v8 = require('node:v8');
  const vm = require('node:vm');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  /** `node_modules/<pkg>` (scoped too) of a module path, or `app` / `packages/<name>` for ours. */
  const packageOf = (file) => {
    const at = file.lastIndexOf('node_modules/');
    if (at === -1) {
      const own = /\/(apps|packages)\/([^/]+)\//.exec(file);
      return own ? `${own[1]}/${own[2]}` : 'other';
    }
    const rest = file.slice(at + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? 'other');
  };
  const rssNow = () =>
    Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
  const newSpace = () =>
    v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;
  const smapsNow = () => {
    const smaps = {};
    try {
      for (const m of fs.readFileSync('/proc/self/smaps_rollup', 'utf8').matchAll(/^(\w+):\s+(\d+) kB/gm))
        smaps[m[1]] = Number(m[2]) * 1024;
    } catch {
      // not Linux
    }
    return smaps;
  };
  const peakMs = Number(process.env.MEMORY_HOOK_PEAK_MS ?? 0);
  if (peakMs > 0) {
    let peak = 0;
    const sample = () => {
      const rss = rssNow();
      if (rss < peak + 1024 * 1024) return;
      peak = rss;
      const spaces = {};
      for (const s of v8.getHeapSpaceStatistics())
        spaces[s.space_name] = { used: s.space_used_size, committed: s.physical_space_size };
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, `peak-${process.pid}.json`),
        JSON.stringify({
          pid: process.pid,
          at: new Date().toISOString(),
          rss,
          memory: process.memoryUsage(),
          spaces,
          smaps: smapsNow(),
        }),
      );
    };
    setInterval(sample, peakMs).unref();
  }
  let snapshots = 0;
  process.on('SIGUSR2', () => {
    const before = { rss: rssNow(), newSpace: newSpace() };
    // V8's last-resort collection also shrinks the young generation and compacts,
    // as its memory reducer does in a process idle for ~10 s (a plain gc() does not).
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    // Let V8 hand freed pages back before the reading.
    setTimeout(() => {
      const modules = {};
      for (const file of Object.keys(require.cache)) {
        const name = packageOf(file);
        modules[name] = (modules[name] ?? 0) + 1;
      }
      fs.mkdirSync(dir, { recursive: true });
      // Resident memory by kind (anonymous: heap, code, wasm, buffers; file: the node binary's pages, shared).
      const smaps = smapsNow();
      const out = {
        pid: process.pid,
        before,
        newSpace: newSpace(),
        memory: process.memoryUsage(),
        smaps,
        modules,
      };
      // MEMORY_HOOK_SNAPSHOT=1: a heap snapshot after the collection too (<dir>/heap-<pid>-<n>.heapsnapshot).
      if (process.env.MEMORY_HOOK_SNAPSHOT) {
        snapshots += 1;
        v8.writeHeapSnapshot(path.join(dir, `heap-${process.pid}-${snapshots}.heapsnapshot`));
      }
      fs.writeFileSync(path.join(dir, `memory-${process.pid}.json`), JSON.stringify(out));
    }, 200);
  });
}
