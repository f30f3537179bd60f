import type { Logger } from '@platform/logging';
import { prismaSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { LedgerRecord } from './record';
import { insertLedgerRecords, type ParkedRecord, parkLedgerRecords, storable } from './repo';

/** A Redis stream entry as XREADGROUP returns it: its id and field/value list (null: deleted meanwhile). */
export type Entry = [id: string, fields: string[] | null];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT4_MAX = 2_147_483_647;

/**
 * Why a parsed value cannot be inserted as a ledger record (null: it can).
 * Checked once Postgres has refused a read's entries as a whole: what fails
 * here is parked without asking Postgres again.
 */
export function ledgerRecordProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const r = value as Record<string, unknown>;
  const isUuid = (v: unknown) => typeof v === 'string' && UUID.test(v);
  if (!isUuid(r.requestId) || !isUuid(r.userId)) return 'requestId and userId must be UUIDs';
  if (r.apiKeyId != null && !isUuid(r.apiKeyId)) return 'apiKeyId must be a UUID or null';
  if (r.clientRequestId != null && !isUuid(r.clientRequestId))
    return 'clientRequestId must be a UUID or null';
  for (const k of ['projectId', 'endpoint', 'currency'])
    if (typeof r[k] !== 'string') return `${k} must be a string`;
  for (const k of ['lane', 'provider', 'model'])
    if (r[k] != null && typeof r[k] !== 'string') return `${k} must be a string or null`;
  // Numbers are rounded to integers on the way in (repo.ts); here only their type and range.
  const count = (v: unknown) => typeof v === 'number' && v >= 0 && v <= INT4_MAX;
  for (const k of ['status', 'promptTokens', 'completionTokens', 'cachedTokens', 'totalTokens'])
    if (!count(r[k])) return `${k} must be a count`;
  if (r.cacheWriteTokens !== undefined && !count(r.cacheWriteTokens))
    return 'cacheWriteTokens must be a count';
  if (
    typeof r.costMicros !== 'number' ||
    !Number.isFinite(r.costMicros) ||
    Math.abs(r.costMicros) > Number.MAX_SAFE_INTEGER
  )
    return 'costMicros must be a number';
  if (typeof r.latencyMs !== 'number' || !Number.isFinite(r.latencyMs) || r.latencyMs > INT4_MAX)
    return 'latencyMs must be a number';
  if (typeof r.createdAt !== 'number' || Number.isNaN(new Date(r.createdAt).getTime()))
    return 'createdAt must be a time';
  if (typeof r.estimated !== 'boolean' || typeof r.byok !== 'boolean')
    return 'estimated and byok must be booleans';
  if (r.continued !== undefined && typeof r.continued !== 'boolean') return 'continued must be a boolean';
  return null;
}

/**
 * The records of stream entries: an entry holds a batch (field 'b', a JSON
 * array: the records appended in one event-loop turn) or, as written before
 * batching, one record (field 'r'). Unreadable entries and records that
 * fail ledgerRecordProblem go to `parked`.
 */
function recordsOf(entries: Entry[], parked: ParkedRecord[]): { entryId: string; record: LedgerRecord }[] {
  const out: { entryId: string; record: LedgerRecord }[] = [];
  for (const [id, fields] of entries) {
    // A pending entry deleted meanwhile comes back without fields: nothing to write.
    if (!fields) continue;
    let values: unknown[];
    try {
      const value = JSON.parse(fields[1] ?? '') as unknown;
      if (fields[0] === 'b' && Array.isArray(value)) values = value;
      else if (fields[0] === 'r' && !Array.isArray(value)) values = [value];
      else throw new Error('unknown entry');
    } catch {
      parked.push({ entryId: id, payload: JSON.stringify(fields), reason: 'unreadable stream entry' });
      continue;
    }
    for (const value of values) {
      const problem = ledgerRecordProblem(value);
      if (problem === null) out.push({ entryId: id, record: value as LedgerRecord });
      else parked.push({ entryId: id, payload: JSON.stringify(value), reason: problem });
    }
  }
  return out;
}

/** SQLSTATE classes of a value Postgres will refuse on every retry: data exception, integrity, program limit. */
const REFUSED_CLASSES = new Set(['22', '23', '54']);

/** The SQLSTATE of a failed Prisma raw query (through either driver adapter), if it carries one. */
export function sqlStateOf(err: unknown): string | undefined {
  const cause = (err as { meta?: { driverAdapterError?: { cause?: Record<string, unknown> } } } | null)?.meta
    ?.driverAdapterError?.cause;
  const code = cause?.originalCode ?? cause?.code;
  if (typeof code === 'string' && code.length === 5) return code;
  const message = err instanceof Error ? err.message : '';
  const at = message.indexOf('Code: `');
  return at >= 0 ? message.slice(at + 7, at + 12) : undefined;
}

/** Whether Postgres refused the statement for its data (so retrying it cannot help), not for being down. */
function refusedForItsData(err: unknown): boolean {
  const state = sqlStateOf(err);
  return state !== undefined && REFUSED_CLASSES.has(state.slice(0, 2));
}

/** A short, storable reason of a refusal (Postgres may quote the bad value in it). */
function reasonOf(err: unknown): string {
  const state = sqlStateOf(err);
  const cause = (err as { meta?: { driverAdapterError?: { cause?: { originalMessage?: unknown } } } } | null)
    ?.meta?.driverAdapterError?.cause?.originalMessage;
  const text = typeof cause === 'string' ? cause : err instanceof Error ? err.message : String(err);
  return String(storable(`${state ?? '?'}: ${text.slice(0, 300)}`));
}

/**
 * Inserts records, isolating those Postgres refuses for their data: the
 * whole list first; if refused, each half, down to single records, which
 * are parked (log2 of the batch statements per bad record). Any other
 * failure (Postgres down, a deadlock) throws, and the batch is retried.
 */
async function insertBisecting(
  prisma: PrismaClient,
  items: { entryId: string; record: LedgerRecord }[],
  parked: ParkedRecord[],
): Promise<void> {
  if (items.length === 0) return;
  try {
    await insertLedgerRecords(
      prismaSql(prisma),
      items.map((i) => i.record),
    );
  } catch (err) {
    if (!refusedForItsData(err)) throw err;
    const [only] = items;
    if (items.length === 1 && only) {
      parked.push({ entryId: only.entryId, payload: JSON.stringify(only.record), reason: reasonOf(err) });
      return;
    }
    const half = Math.ceil(items.length / 2);
    await insertBisecting(prisma, items.slice(0, half), parked);
    await insertBisecting(prisma, items.slice(half), parked);
  }
}

/**
 * The drain's slow path, run only after Postgres refused a read's entries as
 * one statement: each entry parsed, each record checked, those that fit
 * written (`batch` per statement, bisected when refused), and every refused
 * one parked in `usage_parked` (logged, counted by `onParked`), so one bad
 * record never stops the others. Throws when Postgres is down (nothing is
 * acknowledged; the batch is retried).
 */
export async function insertEntriesIsolating(
  opts: { prisma: PrismaClient; logger: Logger; batch: number; onParked(n: number): void },
  entries: Entry[],
): Promise<void> {
  const parked: ParkedRecord[] = [];
  const items = recordsOf(entries, parked);
  for (let i = 0; i < items.length; i += opts.batch)
    await insertBisecting(opts.prisma, items.slice(i, i + opts.batch), parked);
  if (parked.length === 0) return;
  // Parked before the entries are acknowledged: a crash in between parks them again, never loses them.
  await parkLedgerRecords(opts.prisma, parked);
  opts.onParked(parked.length);
  for (const p of parked)
    opts.logger.error(
      { entry: p.entryId, reason: p.reason },
      'usage ledger record refused; parked in usage_parked',
    );
}
