import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import { type ApiKeyVerifier, createApiKeyVerifier } from '../api-keys/verifier';
import type { GatewayEnv } from '../env';
import type { PrismaClient } from '../generated/prisma/client';
import { type Clock, systemClock } from './types';

/** The part of GatewayDeps the identity code uses. */
export type AuthDeps = {
  env: GatewayEnv;
  logger: Logger;
  prisma: PrismaClient;
  kv: KeyValueStore;
  clock?: Clock;
};

export function clockOf(deps: AuthDeps): Clock {
  return deps.clock ?? systemClock;
}

const verifiers = new WeakMap<AuthDeps, ApiKeyVerifier>();

/**
 * The API-key verifier (and its cache) of one app instance. It is keyed by the
 * deps object, so pass the same GatewayDeps object everywhere in createApp:
 * a copy gets its own cache, which is correct but wasteful.
 */
export function apiKeyVerifierFor(deps: AuthDeps): ApiKeyVerifier {
  let verifier = verifiers.get(deps);
  if (!verifier) {
    verifier = createApiKeyVerifier({
      prisma: deps.prisma,
      kv: deps.kv,
      logger: deps.logger,
      pepper: deps.env.GATEWAY_SECRET,
      clock: clockOf(deps),
    });
    verifiers.set(deps, verifier);
  }
  return verifier;
}

/** Flushes pending last_used_at writes and drops the invalidation subscription (shutdown, tests). */
export async function closeApiKeyAuth(deps: AuthDeps): Promise<void> {
  const verifier = verifiers.get(deps);
  if (!verifier) return;
  verifiers.delete(deps);
  await verifier.close();
}
