import { type CompatRow, installedVersion, recordCompat } from './compat-matrix';

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
  const version = installedVersion(pkg ?? row.client);
  try {
    await check();
    recordCompat({ ...rest, version, result: 'pass' });
  } catch (err) {
    const note = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.slice(0, 120);
    recordCompat({ ...rest, version, result: 'fail', note });
    throw err;
  }
}
