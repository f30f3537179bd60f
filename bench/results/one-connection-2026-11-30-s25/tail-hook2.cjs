const dir = process.env.TAIL_HOOK_DIR;
if (dir) {
  const fs = require('node:fs'); const path = require('node:path');
  const { PerformanceObserver, performance } = require('node:perf_hooks');
  const http = require('node:http'); const dc = require('node:diagnostics_channel');
  const reqs = []; const gcs = []; const redis = []; const up = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push([e.startTime, e.duration, e.detail?.kind ?? 0]); }).observe({ entryTypes: ['gc'] });
  const origEmit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (ev, req, res) {
    if (ev === 'request' && req.method === 'POST') {
      const t0 = performance.now();
      res.once('finish', () => reqs.push([t0, performance.now() - t0]));
    }
    return origEmit.apply(this, arguments);
  };
  const starts = new WeakMap();
  dc.subscribe('undici:request:create', ({ request }) => starts.set(request, performance.now()));
  dc.subscribe('undici:request:headers', ({ request }) => { const s = starts.get(request); if (s !== undefined) up.push([s, performance.now() - s, 'headers']); });
  dc.subscribe('undici:request:trailers', ({ request }) => { const s = starts.get(request); if (s !== undefined) up.push([s, performance.now() - s, 'done']); });
  const Module = require('node:module'); const origLoad = Module._load;
  let patched = false;
  Module._load = function (request, parent, isMain) {
    const m = origLoad.apply(this, arguments);
    if (!patched && /ioredis\/built\/Redis\.js$|^ioredis$/.test(request) ) {
      const Redis = m.default || m.Redis || m;
      if (Redis && Redis.prototype && Redis.prototype.sendCommand) {
        patched = true;
        const orig = Redis.prototype.sendCommand;
        Redis.prototype.sendCommand = function (command, stream) {
          const t = performance.now();
          const r = orig.call(this, command, stream);
          command.promise.then(() => redis.push([t, performance.now() - t, command.name]), () => {});
          return r;
        };
      }
    }
    return m;
  };
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `tail-${process.pid}.json`);
  const write = () => { try { fs.writeFileSync(file, JSON.stringify({ reqs, gcs, redis, up })); } catch {} };
  setInterval(write, 2000).unref(); process.on('exit', write);
}
