import type { ApiKeyRules } from '@platform/contract';
import type { RawSql } from '../batching/raw-sql';
import { storedRulesOf } from '../key-rules/rules';

/** What the hot path needs to authenticate a key. */
export type ApiKeyRecord = {
  id: string;
  userId: string;
  scope: string;
  revoked: boolean;
  rules: ApiKeyRules | undefined;
  /** ms since the epoch; null: never expires. */
  expiresAt: number | null;
};

type KeyRow = {
  id: string;
  user_id: string;
  scope: string;
  revoked: boolean;
  rules: unknown;
  expires_at: Date | null;
};

/**
 * The lookup by hash, on raw SQL (the pool's `pg`, not Prisma): a chat's
 * queries stay off Prisma's query compiler, which costs each worker ~8-9 MB
 * from its first query on (docs/performance.md, issue 46).
 */
export async function findApiKeyByHash(sql: RawSql, hash: string): Promise<ApiKeyRecord | null> {
  const [row] = await sql.query<KeyRow>(
    `SELECT id::text, user_id::text, scope, revoked_at IS NOT NULL AS revoked, rules, expires_at
       FROM api_keys WHERE hash = $1`,
    [hash],
  );
  if (!row) return null;
  return {
    id: row.id,
    userId: row.user_id,
    scope: row.scope,
    revoked: row.revoked,
    rules: storedRulesOf(row.rules),
    expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
  };
}

/**
 * One statement for the whole batch (so all or none); never moves
 * last_used_at backwards, and a key named twice takes its latest time.
 */
export async function writeLastUsed(sql: RawSql, entries: { id: string; at: Date }[]): Promise<void> {
  if (entries.length === 0) return;
  await sql.execute(
    `UPDATE api_keys AS k SET last_used_at = u.at
       FROM (SELECT id::uuid AS id, max(at) AS at
               FROM unnest($1::text[], $2::timestamptz[]) AS t(id, at) GROUP BY id) AS u
      WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
    [entries.map((e) => e.id), entries.map((e) => e.at.toISOString())],
  );
}
