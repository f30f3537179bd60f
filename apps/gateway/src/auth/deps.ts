import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { GatewayEnv } from '../env';
import type { PrismaClient } from '../generated/prisma/client';
import type { ApiKeyVerifier } from './api-key-verifier';
import type { KeyGuessingGuard } from './key-guessing';

/** The part of GatewayDeps the identity code uses; built once in buildGatewayDeps. */
export type AuthDeps = {
  env: GatewayEnv;
  logger: Logger;
  prisma: PrismaClient;
  kv: KeyValueStore;
  /** Current time for sessions, codes and key usage. */
  clock: Clock;
  /** The API-key verifier of this app instance, with its cache and last-used writer. */
  apiKeys: ApiKeyVerifier;
  /** Refuses addresses that keep sending bad keys. */
  keyGuessing: KeyGuessingGuard;
};
