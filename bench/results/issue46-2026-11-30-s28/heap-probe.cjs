// Every process: every 250 ms one line: heap spaces, external, smaps_rollup (MB).
const fs = require('node:fs');
const v8 = require('node:v8');
const cluster = require('node:cluster');
const role = cluster.isPrimary ? 'primary' : `worker${cluster.worker?.id}`;
const out = fs.openSync(`/tmp/s28/probe-${role}-${process.pid}.jsonl`, 'a');
const mb = (v) => +(v / 1048576).toFixed(1);
setInterval(() => {
  const r = { t: Date.now() };
  for (const s of v8.getHeapSpaceStatistics()) {
    r[`${s.space_name.replace('_space', '')}.c`] = mb(s.space_size);
    r[`${s.space_name.replace('_space', '')}.u`] = mb(s.space_used_size);
  }
  const m = process.memoryUsage();
  r.ext = mb(m.external); r.ab = mb(m.arrayBuffers);
  const t = fs.readFileSync('/proc/self/smaps_rollup', 'utf8');
  for (const k of ['Pss', 'Pss_Anon', 'Rss']) {
    const mm = new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(t); if (mm) r[k] = mb(+mm[1] * 1024);
  }
  fs.writeSync(out, JSON.stringify(r) + '\n');
}, 250).unref();
