// Every process: sample heap spaces + smaps_rollup every 100 ms; write maxima at exit / every 2 s.
const fs = require('node:fs');
const v8 = require('node:v8');
const cluster = require('node:cluster');
const role = cluster.isPrimary ? 'primary' : `worker${cluster.worker?.id}`;
const max = {};
const bump = (k, v) => { if (!(k in max) || v > max[k]) max[k] = v; };
setInterval(() => {
  for (const s of v8.getHeapSpaceStatistics()) {
    bump(`${s.space_name}.committed`, s.space_size);
    bump(`${s.space_name}.used`, s.space_used_size);
  }
  const m = process.memoryUsage();
  bump('external', m.external); bump('arrayBuffers', m.arrayBuffers); bump('heapTotal', m.heapTotal);
  const t = fs.readFileSync('/proc/self/smaps_rollup', 'utf8');
  for (const k of ['Pss', 'Pss_Anon', 'Pss_File', 'Rss']) {
    const mm = new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(t); if (mm) bump(k + '_kb', +mm[1] * 1024);
  }
}, 100).unref();
setInterval(() => {
  const out = Object.fromEntries(Object.entries(max).map(([k, v]) => [k, +(v / 1048576).toFixed(1)]));
  fs.writeFileSync(`/tmp/s26/heap-probe-${role}-${process.pid}.json`, JSON.stringify(out, null, 1));
}, 2000).unref();
