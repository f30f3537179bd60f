// Every 500 ms per process: Rss by mapping kind (smaps) plus V8 heap committed (MB).
const fs = require('node:fs');
const v8 = require('node:v8');
const cluster = require('node:cluster');
const role = cluster.isPrimary ? 'primary' : `worker${cluster.worker?.id}`;
const out = fs.openSync(`/tmp/s28/p2-${role}-${process.pid}.jsonl`, 'a');
const mb = (kb) => +(kb / 1024).toFixed(1);
setInterval(() => {
  const text = fs.readFileSync('/proc/self/smaps', 'utf8');
  const kinds = {};
  let kind = null;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      const size = (parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024;
      const name = head[5];
      if (name === '[heap]') kind = 'brk';
      else if (name.startsWith('[stack')) kind = 'stack';
      else if (name) kind = name.startsWith('/') ? 'file' : name;
      else if (size >= 1048576) kind = 'cage';
      else if (size >= 16384) kind = 'anon>=16M';
      else if (size >= 1024) kind = 'anon1-16M';
      else kind = 'anon<1M';
      continue;
    }
    const rss = /^Rss:\s+(\d+)/.exec(line);
    if (rss && kind) kinds[kind] = (kinds[kind] ?? 0) + +rss[1];
  }
  const r = { t: Date.now() };
  for (const [k, v] of Object.entries(kinds)) r[k] = mb(v);
  const h = v8.getHeapStatistics();
  r.v8c = mb(h.total_heap_size / 1024); r.v8u = mb(h.used_heap_size / 1024); r.v8phys = mb(h.total_physical_size / 1024);
  r.ext = mb(process.memoryUsage().external / 1024);
  fs.writeSync(out, JSON.stringify(r) + '\n');
}, 500).unref();
