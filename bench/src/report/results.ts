import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunSettings, ScenarioResult } from '../execute';
import type { GitInfo, MachineInfo } from './machine';

/** The JSON file of one run, bench/results/<date>-<sha>.json. */
export type RunRecord = {
  startedAt: string;
  git: GitInfo;
  machine: MachineInfo;
  settings: RunSettings;
  scenarios: ScenarioResult[];
};

export const RESULTS_DIR = path.join(__dirname, '..', '..', 'results');
const INDEX = path.join(RESULTS_DIR, 'README.md');

const INDEX_HEADER = `# Recorded benchmark results

Appended by \`npm run bench -w @platform/bench\` (see ../README.md for what each
scenario measures and how to compare runs); the JSON file named in each section
has every number. Newest last. Latencies in ms; CPU is the service process's
CPU time per response; DB columns come from pg_stat_database (Postgres only).
`;

function fileNameFor(record: RunRecord): string {
  const base = `${record.startedAt.slice(0, 10)}-${record.git.sha}`;
  let name = `${base}.json`;
  for (let n = 2; existsSync(path.join(RESULTS_DIR, name)); n += 1) name = `${base}-${n}.json`;
  return name;
}

const fmt = (n: number | undefined) => (n === undefined ? '–' : String(n));

export function renderMarkdown(record: RunRecord, fileName: string | null): string {
  const { machine: m, settings: s, git } = record;
  const backing = `Postgres ${m.postgres.real ? `real (${m.postgres.version})` : 'PGlite'}, Redis ${m.redis.real ? 'real' : 'in-memory'}`;
  const dirty =
    git.dirtyFiles.length > 0 ? ` + ${git.dirtyFiles.length} uncommitted files under apps/packages` : '';
  const lines = [
    `## ${record.startedAt.slice(0, 16).replace('T', ' ')} UTC, ${git.sha}${dirty}`,
    '',
    `Node ${m.node}, ${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}; ${backing}; load average ${m.loadAverage.start} -> ${m.loadAverage.end}.`,
    `Load: autocannon in a ${s.loadgen === 'child' ? 'child process' : 'the service process'}, ${s.connections} connections, ${s.warmupSec} s warm-up + ${s.durationSec} s.${fileName ? ` File: [${fileName}](${fileName}).` : ''}`,
    '',
    '| scenario | expect | req/s | p50 | p90 | p99 | max | non-2xx | errors | CPU ms/req | loop p99 | GC ms | DB xact/req | DB rows written/req |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of record.scenarios) {
    const written = r.db
      ? Math.round((r.db.rowsInserted + r.db.rowsUpdated + r.db.rowsDeleted) * 1000) / 1000
      : undefined;
    lines.push(
      `| ${r.name} | ${r.expectStatus} | ${r.requestsPerSec} | ${r.latencyMs.p50} | ${r.latencyMs.p90} | ${r.latencyMs.p99} | ${r.latencyMs.max} | ${r.non2xx} | ${r.errors} | ${r.cpuMsPerRequest} | ${r.process.eventLoopDelayMs.p99} | ${r.process.gc.totalMs} | ${fmt(r.db?.transactions)} | ${fmt(written)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Writes the JSON file and appends the markdown section; returns the JSON path and the section. */
export function recordRun(record: RunRecord): { file: string; markdown: string } {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const fileName = fileNameFor(record);
  const file = path.join(RESULTS_DIR, fileName);
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  const markdown = renderMarkdown(record, fileName);
  if (!existsSync(INDEX)) writeFileSync(INDEX, INDEX_HEADER);
  appendFileSync(INDEX, `\n${markdown}`);
  return { file, markdown };
}
