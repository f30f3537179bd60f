import fs from 'node:fs';
import path from 'node:path';
import { type CompatRow, recordCompat } from './compat-matrix';

/**
 * The installed version of `pkg`, read from `node_modules/<pkg>/package.json`
 * in e2e or a folder above it (workspaces hoist): some packages' `exports`
 * hide their package.json from require.resolve.
 */
function versionOf(pkg: string): string {
  for (let dir = path.resolve(__dirname, '../../..'); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'node_modules', pkg, 'package.json');
    if (fs.existsSync(file))
      return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) throw new Error(`${pkg} is not installed`);
  }
}

/**
 * Runs one client check and records its row in the compatibility matrix:
 * `pass` when `check` resolves, `fail` with the first line of the error when
 * it throws (the error is rethrown, so the test fails too).
 */
export async function checkClient(
  row: Omit<CompatRow, 'version' | 'result' | 'note'> & { pkg?: string },
  check: () => Promise<void>,
): Promise<void> {
  const { pkg, ...rest } = row;
  const version = versionOf(pkg ?? row.client);
  try {
    await check();
    recordCompat({ ...rest, version, result: 'pass' });
  } catch (err) {
    const note = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.slice(0, 120);
    recordCompat({ ...rest, version, result: 'fail', note });
    throw err;
  }
}
