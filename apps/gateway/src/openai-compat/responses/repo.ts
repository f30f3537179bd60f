import type { RawSql } from '../../batching/raw-sql';

/** One stored response as read back: the answer as sent and the conversation through it. */
export type StoredResponseRow = { response: unknown; messages: unknown };

// Raw SQL on the pool (`pg`, or PGlite embedded), not Prisma: `/v1/responses` is a
// chat path, and a chat's queries stay off Prisma's query compiler, which costs a
// worker ~8-9 MB from its first query (docs/performance.md, issue 46). JSON goes as
// text cast to jsonb: pg would send a JS array as a Postgres array.

export async function insertStoredResponse(
  sql: RawSql,
  row: { id: string; userId: string; response: object; messages: object; expiresAt: Date },
): Promise<void> {
  await sql.execute(
    `INSERT INTO stored_responses (id, user_id, response, messages, expires_at)
     VALUES ($1, $2::uuid, $3::jsonb, $4::jsonb, $5::timestamptz)`,
    [
      row.id,
      row.userId,
      JSON.stringify(row.response),
      JSON.stringify(row.messages),
      row.expiresAt.toISOString(),
    ],
  );
}

/** The user's stored response, null when there is none (or another user's, or expired). */
export async function findStoredResponse(
  sql: RawSql,
  userId: string,
  id: string,
  now: Date,
): Promise<StoredResponseRow | null> {
  const [row] = await sql.query<StoredResponseRow>(
    `SELECT response, messages FROM stored_responses
      WHERE id = $1 AND user_id = $2::uuid AND expires_at > $3::timestamptz`,
    [id, userId, now.toISOString()],
  );
  return row ?? null;
}

/** Deletes the user's stored response; false when the user has none by that id. */
export async function deleteStoredResponse(sql: RawSql, userId: string, id: string): Promise<boolean> {
  const deleted = await sql.execute('DELETE FROM stored_responses WHERE id = $1 AND user_id = $2::uuid', [
    id,
    userId,
  ]);
  return deleted > 0;
}

/** Deletes at most `batch` expired responses, oldest first; returns how many. */
export async function deleteExpiredResponses(sql: RawSql, now: Date, batch: number): Promise<number> {
  return sql.execute(
    `DELETE FROM stored_responses
      WHERE id IN (SELECT id FROM stored_responses WHERE expires_at <= $1::timestamptz
                    ORDER BY expires_at LIMIT $2::int)`,
    [now.toISOString(), batch],
  );
}
