import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunRecord } from './report/results';

// Usage: tsx src/compare.ts <baseline.json> <candidate.json>
// Prints one markdown row per scenario present in both runs.

function load(file: string): RunRecord {
  return JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
}

function change(before: number, after: number): string {
  if (before === 0) return `${before} -> ${after}`;
  const pct = ((after - before) / before) * 100;
  return `${before} -> ${after} (${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%)`;
}

function main(): number {
  const [baseFile, candidateFile] = process.argv.slice(2);
  if (!baseFile || !candidateFile) {
    console.error('usage: compare.ts <baseline.json> <candidate.json>');
    return 2;
  }
  const base = load(baseFile);
  const candidate = load(candidateFile);
  const describe = (r: RunRecord, file: string) =>
    `${path.basename(file)}: ${r.git.sha}, ${r.machine.cpuModel} x${r.machine.cores}, Postgres ${r.machine.postgres.real ? 'real' : 'PGlite'}, Redis ${r.machine.redis.real ? 'real' : 'memory'}, load avg ${r.machine.loadAverage.start}, ${r.settings.loadgen}, ${r.settings.connections} conn`;
  console.log(`baseline  ${describe(base, baseFile)}\ncandidate ${describe(candidate, candidateFile)}\n`);
  if (
    base.machine.cpuModel !== candidate.machine.cpuModel ||
    base.machine.cores !== candidate.machine.cores
  ) {
    console.log('WARNING: different machines; compare CPU ms/req, not req/s.\n');
  }
  console.log('| scenario | req/s | p99 ms | CPU ms/req | DB xact/req |');
  console.log('|---|---|---|---|---|');
  for (const b of base.scenarios) {
    const c = candidate.scenarios.find((s) => s.name === b.name);
    if (!c) continue;
    const db = b.db && c.db ? change(b.db.transactions, c.db.transactions) : '–';
    console.log(
      `| ${b.name} | ${change(b.requestsPerSec, c.requestsPerSec)} | ${change(b.latencyMs.p99, c.latencyMs.p99)} | ${change(b.cpuMsPerRequest, c.cpuMsPerRequest)} | ${db} |`,
    );
  }
  return 0;
}

process.exit(main());
