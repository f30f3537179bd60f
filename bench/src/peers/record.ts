import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RESULTS_DIR } from '../report/results';

/**
 * Writes `results/<date>-<sha>-<kind>.json` and `.svg`, a copy of the chart as
 * `results/<kind>-latest.svg` (what the READMEs embed), and appends `markdown`
 * (which may reference the chart as {{svg}}) to results/README.md.
 */
export function recordSideBySide(opts: {
  kind: string;
  startedAt: string;
  sha: string;
  record: unknown;
  svg: string;
  markdown: (files: { json: string; svg: string }) => string;
}): { json: string; svg: string } {
  const base = `${opts.startedAt.slice(0, 10)}-${opts.sha}-${opts.kind}`;
  let name = base;
  for (let n = 2; existsSync(path.join(RESULTS_DIR, `${name}.json`)); n += 1) name = `${base}-${n}`;
  const files = { json: `${name}.json`, svg: `${name}.svg` };
  writeFileSync(path.join(RESULTS_DIR, files.json), `${JSON.stringify(opts.record, null, 2)}\n`);
  writeFileSync(path.join(RESULTS_DIR, files.svg), opts.svg);
  writeFileSync(path.join(RESULTS_DIR, `${opts.kind}-latest.svg`), opts.svg);
  appendFileSync(path.join(RESULTS_DIR, 'README.md'), `\n${opts.markdown(files)}`);
  return files;
}

/** Records the run (recordSideBySide) and prints its markdown and where it went. */
export function recordAndPrint(opts: {
  kind: string;
  startedAt: string;
  record: { git: { sha: string } };
  svg: string;
  markdown: (files: { json: string; svg: string }) => string;
}): void {
  const files = recordSideBySide({ ...opts, sha: opts.record.git.sha });
  console.log(opts.markdown(files));
  console.log(`recorded bench/results/${files.json}, ${files.svg} and appended to bench/results/README.md`);
}

/** Median of numbers (mean of the middle two for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export const round2 = (n: number) => Math.round(n * 100) / 100;
/** Rounds to `digits` significant decimals without float noise in the JSON. */
export const roundTo = (n: number, digits: number) => Number(n.toFixed(digits));
