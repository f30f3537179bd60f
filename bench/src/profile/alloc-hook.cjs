// Samples what a process allocates, including objects the GC already collected
// (the live-objects-only --heap-prof misses short-lived garbage, which is what
// costs GC time on a request path). Load it with
//   --gateway-node-args "--require <abs path>/bench/src/profile/alloc-hook.cjs"
// and set ALLOC_PROF_DIR; each process writes <dir>/alloc-<pid>.heapprofile at exit.
// Summarise with summarise-heapprofile.ts.
const dir = process.env.ALLOC_PROF_DIR;
if (dir) {
  const inspector = require('node:inspector');
  const fs = require('node:fs');
  const path = require('node:path');
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.ALLOC_PROF_INTERVAL ?? 16384),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err) return;
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `alloc-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  };
  process.on('exit', write);
  process.prependListener('SIGTERM', write);
}
