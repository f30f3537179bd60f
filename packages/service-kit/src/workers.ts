/**
 * `WORKERS`: how many processes serve. `auto` (the default) is one per CPU
 * the process may use (`os.availableParallelism()`, which follows the
 * container's CPU limit); a positive integer is taken as is. Kept free of
 * imports so the cluster primary can parse it without loading anything.
 */
export type WorkersSetting = 'auto' | number;

export const WORKERS_HELP = 'WORKERS must be "auto" or a positive integer';

/** The parsed setting, or undefined when it is neither `auto` nor a positive integer. */
export function parseWorkers(value: string | undefined): WorkersSetting | undefined {
  const v = value?.trim() ?? '';
  if (v === '' || v === 'auto') return 'auto';
  if (!/^[1-9][0-9]{0,3}$/.test(v)) return undefined;
  return Number(v);
}
