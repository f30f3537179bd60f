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

type RecordedFiles = { json: string; svg: string };

/**
 * Prints the run's markdown (`markdownOf(record, null)`) when not recording;
 * otherwise records it (recordSideBySide, chart from `chartOf`) and prints its
 * markdown with the files and where they went.
 */
export function printOrRecord<R extends { startedAt: string; git: { sha: string } }>(
  kind: string,
  record: R,
  shouldRecord: boolean,
  chartOf: (r: R) => string,
  markdownOf: (r: R, files: RecordedFiles | null) => string,
): void {
  if (!shouldRecord) {
    console.log(markdownOf(record, null));
    return;
  }
  const files = recordSideBySide({
    kind,
    startedAt: record.startedAt,
    sha: record.git.sha,
    record,
    svg: chartOf(record),
    markdown: (f) => markdownOf(record, f),
  });
  console.log(markdownOf(record, files));
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

/** "WORKERS=auto (the default)" or what --gateway-env / --gateway-node-args added. */
export function gatewaySettingsText(
  g: { nodeArgs: string[]; env: Record<string, string> } | undefined,
): string {
  const env = Object.entries(g?.env ?? {}).map(([k, v]) => `${k}=${v}`);
  const parts = [
    ...(env.some((e) => e.startsWith('WORKERS=')) ? [] : ['WORKERS=auto (the default)']),
    ...env,
  ];
  if (g?.nodeArgs.length) parts.push(`extra node flags ${g.nodeArgs.join(' ')}`);
  return `**${parts.join(', ')}**`;
}
