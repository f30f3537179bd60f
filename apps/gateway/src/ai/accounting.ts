import type { ChatUsage } from '@platform/contract';
import { isAppError } from '@platform/errors';
import { addAccessLogFields } from '@platform/logging';
import type { Response } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';
import { clientAbortSignal } from './client-signal';
import { ClientGoneError, FallbackExhaustedError, type FallbackResult } from './fallback';
import type { Target } from './lanes';
import type { AiRuntime, Caller, StoredKeys } from './runtime';

/** What is known about a request before the upstream call. */
export type AccountingBase = {
  requestId: string;
  caller: Caller;
  projectId: string;
  endpoint: string;
  lane: string | null;
  startedAt: number;
};

export function callerOf(res: Response): Caller {
  const auth = requireAuthOf(res);
  return { userId: auth.userId, apiKeyId: auth.kind === 'api_key' ? auth.apiKeyId : null };
}

/** The upstream that answered, on the request's one access-log line (set before the response ends). */
export function logUpstream(res: Response, result: FallbackResult<unknown>): void {
  addAccessLogFields(res, {
    provider: result.target.provider,
    model: result.target.model,
    attempts: result.attempts,
    upstream_ms: result.latencyMs,
  });
}

export function requestIdOf(res: Response): string {
  const id = res.locals.requestId;
  return typeof id === 'string' ? id : '';
}

/** How a request ended: the status the caller got, the target that answered (if any), its usage. */
export type RequestOutcome = { status: number; target: Target | undefined; usage: ChatUsage | null };

/**
 * Records one finished request (batched, off the request path) and charges
 * its tokens to the caller's daily budget.
 */
export function accountRequest(
  rt: Pick<AiRuntime, 'usage' | 'budget'>,
  base: AccountingBase,
  outcome: RequestOutcome,
): void {
  const usage = outcome.usage;
  rt.usage.record({
    requestId: base.requestId,
    userId: base.caller.userId,
    apiKeyId: base.caller.apiKeyId,
    projectId: base.projectId,
    endpoint: base.endpoint,
    lane: base.lane,
    provider: outcome.target?.provider ?? null,
    model: outcome.target?.model ?? null,
    status: outcome.status,
    promptTokens: usage?.prompt_tokens ?? 0,
    completionTokens: usage?.completion_tokens ?? 0,
    totalTokens: usage?.total_tokens ?? 0,
    latencyMs: Date.now() - base.startedAt,
  });
  if (usage && usage.total_tokens > 0) rt.budget.consume(base.caller.userId, usage.total_tokens);
}

/** Status recorded when the client disconnected before the answer (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Runs an upstream call and records its usage whatever the outcome. A client
 * that went away gets nothing more; a failed chain is answered with the error
 * its last target earned.
 */
export async function withAccounting(
  rt: AiRuntime,
  base: AccountingBase,
  run: () => Promise<RequestOutcome>,
): Promise<void> {
  try {
    accountRequest(rt, base, await run());
  } catch (err) {
    if (err instanceof ClientGoneError) {
      accountRequest(rt, base, { status: CLIENT_CLOSED_STATUS, target: undefined, usage: null });
      return;
    }
    if (err instanceof FallbackExhaustedError) {
      accountRequest(rt, base, { status: err.error.status, target: err.lastTarget, usage: null });
      throw err.error;
    }
    accountRequest(rt, base, { status: isAppError(err) ? err.status : 500, target: undefined, usage: null });
    throw err;
  }
}

/** What an accounted request handler gets: the caller's stored keys and a signal for a client that left. */
export type AccountedCall = { storedKeys: StoredKeys; clientSignal: AbortSignal; requestId: string };

/**
 * The frame of every AI route: who calls and when it started, the caller's
 * stored keys, a client-gone signal, and usage recorded whatever `run` returns
 * or throws (withAccounting).
 */
export async function runAccounted(
  rt: AiRuntime,
  res: Response,
  request: { projectId: string; endpoint: string; lane: string | null },
  run: (call: AccountedCall) => Promise<RequestOutcome>,
): Promise<void> {
  const caller = callerOf(res);
  const requestId = requestIdOf(res);
  const base: AccountingBase = { requestId, caller, startedAt: Date.now(), ...request };
  const clientSignal = clientAbortSignal(res);
  await withAccounting(rt, base, async () =>
    run({ storedKeys: await rt.storedKeys(caller.userId), clientSignal, requestId }),
  );
}
