/**
 * The compatibility matrix (issue 38): every real-client test records one row per
 * client x target protocol x stream it drove, and the matrix in
 * docs/compatibility.md is written from all rows found after each client file.
 *
 * Rows live in e2e/artifacts/compat/<client>.json (git-ignored), one file per
 * client so files running in parallel never write the same one. The doc is
 * rewritten from every row file present, so a partial local run only shows the
 * clients it ran.
 */
import fs from 'node:fs';
import path from 'node:path';

export type CompatTarget = 'openai-chat' | 'openai-responses' | 'anthropic';

export type CompatRow = {
  /** npm package of the client, e.g. `@anthropic-ai/claude-code`. */
  client: string;
  /** The installed version (read from its package.json). */
  version: string;
  /** How the client was pointed at us, e.g. `model claude-sonnet-4-5`, `model lane/x`. */
  how: string;
  /** Protocol of the upstream target behind the gateway. */
  target: CompatTarget;
  stream: boolean;
  /** What was checked, e.g. `tool round trip, usage with cache tokens`. */
  checks: string;
  result: 'pass' | 'fail';
  note?: string;
};

const E2E_ROOT = path.resolve(__dirname, '../../..');
const ROWS_DIR = path.join(E2E_ROOT, 'artifacts/compat');
const DOC = path.resolve(E2E_ROOT, '../docs/compatibility.md');

/** The version of an installed npm package, as the matrix shows it. */
export function installedVersion(pkg: string): string {
  // Packages whose `exports` leave out package.json (@anthropic-ai/sdk): found from the
  // resolver's search folders instead.
  const folders = require.resolve.paths(pkg) ?? [];
  for (const folder of [E2E_ROOT, ...folders]) {
    const file = path.join(
      folder.endsWith('node_modules') ? folder : path.join(folder, 'node_modules'),
      pkg,
      'package.json',
    );
    if (fs.existsSync(file))
      return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  throw new Error(`${pkg} is not installed`);
}

function rowsFile(client: string): string {
  return path.join(ROWS_DIR, `${client.replace(/[^a-z0-9.-]+/gi, '_')}.json`);
}

function readRows(file: string): CompatRow[] {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as CompatRow[];
  } catch {
    return [];
  }
}

/** Adds (or replaces, by client/how/target/stream) one row. */
export function recordCompat(row: CompatRow): void {
  fs.mkdirSync(ROWS_DIR, { recursive: true });
  const file = rowsFile(row.client);
  const key = (r: CompatRow) => `${r.client}|${r.how}|${r.target}|${r.stream}`;
  const rows = readRows(file).filter((r) => key(r) !== key(row));
  rows.push(row);
  fs.writeFileSync(file, `${JSON.stringify(rows, null, 2)}\n`);
}

/** The markdown of the matrix from the given rows (sorted, stable). */
export function renderCompatDoc(rows: CompatRow[]): string {
  const sorted = [...rows].sort((a, b) =>
    `${a.client}|${a.how}|${a.target}|${a.stream}`.localeCompare(
      `${b.client}|${b.how}|${b.target}|${b.stream}`,
    ),
  );
  const lines = [
    '# Compatibility matrix',
    '',
    'Written by the real-client tests in `e2e/test/clients/` (each client installed',
    'unmodified from npm and driven through the gateway against the scripted upstream',
    'fakes of `@platform/testing`). Regenerate with `npm test -w @platform/e2e -- clients`.',
    'Field policy: [gateway-ai.md](gateway-ai.md#field-policy).',
    '',
  ];
  const header = [
    'client',
    'version',
    'how it is pointed at the gateway',
    'target protocol',
    'stream',
    'checked',
    'result',
  ];
  const body = sorted.map((r) => [
    `\`${r.client}\``,
    r.version,
    r.how,
    r.target,
    r.stream ? 'yes' : 'no',
    r.checks,
    r.result === 'pass' ? 'pass' : `**fail**${r.note ? `: ${r.note}` : ''}`,
  ]);
  // Columns padded as the repository's formatter (biome) prints tables, so the
  // written file passes `npm run lint` unchanged.
  const widths = header.map((h, i) => Math.max(3, h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  lines.push(line(header), line(widths.map((w) => '-'.repeat(w))));
  for (const row of body) lines.push(line(row));
  return `${lines.join('\n')}\n`;
}

/** Rewrites docs/compatibility.md from every row file present. Call in afterAll. */
export function writeCompatDoc(): void {
  if (!fs.existsSync(ROWS_DIR)) return;
  const rows = fs
    .readdirSync(ROWS_DIR)
    .filter((n) => n.endsWith('.json'))
    .flatMap((n) => readRows(path.join(ROWS_DIR, n)));
  if (rows.length > 0) fs.writeFileSync(DOC, renderCompatDoc(rows));
}
