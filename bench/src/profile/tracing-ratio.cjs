// On/off ratios of loaded chat in a `peers` run with tracing on one side only
// (results/tracing-cost.md): per round the traced side over the other, then the
// median over rounds. Usage: node bench/src/profile/tracing-ratio.cjs <peers.json> ours|variant
// (the side that traced: the run's start line says which, `[tracing ON]`).
const path = require('node:path');

const [file, on] = process.argv.slice(2);
if (!file || (on !== 'ours' && on !== 'variant')) {
  console.error('usage: node bench/src/profile/tracing-ratio.cjs <peers.json> ours|variant');
  process.exit(2);
}
const record = require(path.resolve(file));
const off = on === 'ours' ? 'variant' : 'ours';
const loaded = (target) =>
  record.runs.filter((r) => r.target === target && r.kind === 'chat' && r.mode === 'loaded');
const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const traced = loaded(on);
const untraced = loaded(off);
const rps = traced.map((r, i) => r.requestsPerSec / untraced[i].requestsPerSec);
const cpu = traced.map((r, i) => r.cpuMsPerRequest / untraced[i].cpuMsPerRequest);
console.log(
  `tracing on ${on}: loaded chat on/off, median of ${rps.length} rounds: req/s ${median(rps).toFixed(3)}x, ` +
    `CPU per request ${median(cpu).toFixed(3)}x; rounds req/s ${rps.map((v) => v.toFixed(2)).join(' ')}, ` +
    `CPU ${cpu.map((v) => v.toFixed(2)).join(' ')}; load average ${record.machine.loadAverage.start}-${record.machine.loadAverage.end}`,
);
