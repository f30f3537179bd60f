import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { RawSql } from '../batching/raw-sql';
import type { GatewayEnv } from '../env';
import type { PrismaClient } from '../generated/prisma/client';
import type { ApiKeyVerifier } from './api-key-verifier';
import type { KeyGuessingGuard } from './key-guessing';

/** The part of GatewayDeps the identity code uses; built once in buildGatewayDeps. */
export type AuthDeps = {
  env: GatewayEnv;
  logger: Logger;
  prisma: PrismaClient;
  /**
   * Raw SQL on the same pool (`pg`, or PGlite embedded): what a chat reads and
   * writes goes through it, never through Prisma, whose query compiler costs a
   * worker ~8-9 MB from its first query (docs/performance.md, issue 46).
   */
  sql: RawSql;
  kv: KeyValueStore;
  /** Current time for sessions, codes and key usage. */
  clock: Clock;
  /** The API-key verifier of this app instance, with its cache and last-used writer. */
  apiKeys: ApiKeyVerifier;
  /** Refuses addresses that keep sending bad keys. */
  keyGuessing: KeyGuessingGuard;
};
