import type { Logger } from '@platform/logging';
import type { RawSql } from '../../batching/raw-sql';
import {
  deleteExpiredResponses,
  deleteStoredResponse,
  findStoredResponse,
  insertStoredResponse,
  type StoredResponseRow,
} from './repo';

const DAY_MS = 86_400_000;

/**
 * Responses kept for `store: true` (docs/gateway-ai.md, Stored responses):
 * every read and delete is scoped to the owning user, so another user's id
 * reads as missing. Kept `retentionDays`, then swept.
 */
export type ResponseStore = {
  save(userId: string, id: string, row: { response: object; messages: object }): Promise<void>;
  find(userId: string, id: string): Promise<StoredResponseRow | null>;
  remove(userId: string, id: string): Promise<boolean>;
  /** Removes expired responses in batches; returns how many. */
  sweep(): Promise<number>;
  /** Starts the hourly sweep; returns its stop. */
  startSweeping(logger: Logger, everyMs?: number): () => void;
};

export function createResponseStore(opts: {
  /** The pool's raw SQL (repo.ts: this path stays off Prisma). */
  sql: RawSql;
  clock: () => number;
  retentionDays: number;
  batch?: number;
}): ResponseStore {
  const { sql, clock } = opts;
  const batch = opts.batch ?? 1000;
  const sweep = async () => {
    let total = 0;
    for (;;) {
      const n = await deleteExpiredResponses(sql, new Date(clock()), batch);
      total += n;
      if (n < batch) return total;
    }
  };
  return {
    save: (userId, id, row) =>
      insertStoredResponse(sql, {
        id,
        userId,
        ...row,
        expiresAt: new Date(clock() + opts.retentionDays * DAY_MS),
      }),
    find: (userId, id) => findStoredResponse(sql, userId, id, new Date(clock())),
    remove: (userId, id) => deleteStoredResponse(sql, userId, id),
    sweep,
    startSweeping(logger, everyMs = 3_600_000) {
      const timer = setInterval(() => {
        sweep()
          .then((n) => {
            if (n > 0) logger.info({ deleted: n }, 'stored responses past retention removed');
          })
          .catch((err: unknown) =>
            logger.warn(
              { err: err instanceof Error ? err.message : String(err) },
              'stored responses retention failed; next run retries',
            ),
          );
      }, everyMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
