import type { KeyValueStore } from '@platform/db';
import { jsonBody } from '@platform/service-kit';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { requireApiKey } from '../auth/api-key-auth';
import type { AuthDeps } from '../auth/deps';
import { aiLimitCheck } from './ai-rate';
import { type KeyAndLimitsDeps, requireApiKeyAndLimits } from './key-and-limits';
import { admissionBeforeError } from './pending';

/**
 * How a route is admitted: `spend` (key, rate, body; its handler then calls
 * `admit` for the key rules and the budget reservation) or `read` (key only:
 * reads that cost nothing, and the MCP endpoint, whose tool calls reserve
 * one by one).
 */
export type AdmissionKind = 'spend' | 'read';

// Marks the first handler of each guard list, so that a test can tell from the
// app's router stack that a route is behind admission (e2e/test/import-graph.test.ts).
const KIND = Symbol.for('gateway.admission');

function marked<T extends object>(handler: T, kind: AdmissionKind): T {
  return Object.defineProperty(handler, KIND, { value: kind });
}

/** The admission kind a route handler was marked with, if it is an admission guard. */
export function admissionKindOf(handler: unknown): AdmissionKind | undefined {
  if (typeof handler !== 'function') return undefined;
  return (handler as unknown as Record<symbol, AdmissionKind | undefined>)[KIND];
}

/** The guards every AI route is mounted behind; built once by createApp. */
export type Admission = {
  /** Key check and rate before the body is parsed (a refused caller cannot make us read 10 MB), then the body. */
  spend: RequestHandler[];
  /** The same, with `Authorization: Bearer` accepted too (OpenAI's and Anthropic's SDKs). */
  spendBearer: RequestHandler[];
  /** Key only (`x-api-key` or Bearer): model lists, stored responses, the MCP endpoint. */
  read: RequestHandler;
  /**
   * Error step of each AI router, before its error renderer: a request that
   * failed before its reservation still owes its key check and rate hit.
   */
  beforeError(render?: ErrorRequestHandler): ErrorRequestHandler;
};

/**
 * The AI routes' guards. For a key this instance has cached, the key check
 * and rate hit ride in the budget reservation's script (pending.ts, admit.ts):
 * one store round trip (docs/performance.md).
 */
export function createAdmission(
  deps: KeyAndLimitsDeps & Pick<AuthDeps, 'apiKeys' | 'keyGuessing' | 'clock'>,
  opts: { kv: KeyValueStore; perMinute: number; bodyLimit: string },
): Admission {
  const aiLimits = aiLimitCheck({ kv: opts.kv, perMinute: opts.perMinute });
  const keyAndLimits = { limits: aiLimits.check, deferredRate: aiLimits.counterOf };
  const body = jsonBody(opts.bodyLimit);
  return {
    spend: [marked(requireApiKeyAndLimits(deps, keyAndLimits), 'spend'), body],
    spendBearer: [marked(requireApiKeyAndLimits(deps, { bearer: true, ...keyAndLimits }), 'spend'), body],
    read: marked(requireApiKey(deps, { bearer: true }), 'read'),
    beforeError: admissionBeforeError,
  };
}
