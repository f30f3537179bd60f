import { createHash } from 'node:crypto';
import { ZIdempotencyKey } from '@platform/contract';
import type { KeyValueStore } from '@platform/db';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';

/** Stripe keeps idempotency keys for 24 hours; our fingerprints live as long. */
const FINGERPRINT_TTL_MS = 24 * 60 * 60 * 1000;

function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Reads the optional `Idempotency-Key` header; a present but malformed one is 400. */
export function readIdempotencyHeader(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const raw = Array.isArray(value) ? value[0] : value;
  return parseRequestPart(ZIdempotencyKey, raw);
}

/** The Stripe idempotency key of one call, and how to record that the call succeeded. */
export type ScopedIdempotency = {
  /** Key for the Stripe call; undefined without a client key (the SDK then uses its own per-call key). */
  stripeKey: string | undefined;
  /** Records the body's fingerprint after the call succeeded. */
  remember(): Promise<void>;
};

/**
 * Turns a client's `Idempotency-Key` into the key sent to Stripe, scoped to the
 * operation and the user so that two users who happen to pick the same key can
 * never receive each other's session. A retry with the same key and another
 * body is refused with 409, also when the difference does not reach Stripe's
 * parameters (e.g. a changed e-mail). Like Stripe, only a call that succeeded
 * binds the key, so a client may fix a rejected body and retry with its key.
 */
export async function scopeIdempotencyKey(
  kv: KeyValueStore,
  input: { operation: string; userId: string; clientKey: string | undefined; body: unknown },
): Promise<ScopedIdempotency> {
  if (input.clientKey === undefined) return { stripeKey: undefined, remember: async () => undefined };
  const scope = sha256(`${input.operation}\0${input.userId}\0${input.clientKey}`);
  const fingerprint = sha256(JSON.stringify(input.body));
  const slot = `idempotency:${scope}`;
  const first = await kv.get(slot);
  if (first !== null && first !== fingerprint) throw new AppError('idempotency_conflict');
  return {
    stripeKey: `${input.operation}:${scope}`,
    remember: async () => {
      await kv.setIfAbsent(slot, fingerprint, FINGERPRINT_TTL_MS);
    },
  };
}
