import { randomUUID } from 'node:crypto';
import type { ChatUsage } from '@platform/contract';
import { AppError, isAppError } from '@platform/errors';
import { addAccessLogFields, type Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import { endSpan, sendJson, startSpan, tracingOn } from '@platform/service-kit';
import type { Response } from 'express';
import { type AdmissionPorts, admit } from '../admission/admit';
import { type Caller, callerIdOf } from '../admission/caller';
import type { Budgets, Reservation } from '../budgets/budgets';
import { captureContent } from '../observability/capture';
import type { RequestLog } from '../observability/request-log';
import { annotateRecord } from '../observability/spans';
import type { UsageLedger } from '../usage/ledger';
import {
  costMicros,
  type MediaUse,
  mediaCostMicros,
  type PriceTable,
  priceOf,
  type TokenCounts,
} from '../usage/pricing';
import type { LedgerRecord } from '../usage/record';
import type { UsageAttemptRow } from '../usage/repo';
import type { CacheTokens } from './chat';
import { clientAbortSignal } from './client-signal';
import type { Target } from './config/lanes';
import { ClientGoneError, FallbackExhaustedError, type FallbackResult } from './fallback';
import type { AiMetrics } from './metrics';
import { type BillableAttempt, collectAttempts, type RequestAttempts } from './request-attempts';
import { type AccountedRequest, capCompletion, combinedReservation } from './reserve';
import type { StoredKeys } from './runtime';

/** What pricing a record reads: the price table, its currency, the time. */
export type PricingPorts = { prices: PriceTable; currency: string; clock: Clock };

/**
 * What the accounting frame touches, and nothing else (the app's AiRuntime
 * has them all; a unit test passes fakes): admission, more budget for a
 * stream's continuation, the ledger, pricing, metrics, the log, the request
 * log and the billable failed attempts.
 */
export type AccountingPorts = PricingPorts & {
  admission: AdmissionPorts<AccountedRequest, StoredKeys>;
  budgets: Pick<Budgets, 'reserve'>;
  ledger: Pick<UsageLedger, 'append'>;
  metrics: Pick<AiMetrics, 'requestFinished'>;
  logger: Logger;
  requestLog: Pick<RequestLog, 'record' | 'capturedProjects'> | null;
  /** Keeps failed attempts the provider may bill (usage_attempts); never charged. */
  recordAttempts?: (rows: UsageAttemptRow[]) => Promise<void>;
};

/** What is known about a request before the upstream call. */
export type AccountingBase = {
  /** The ledger id: unique per request, minted by the gateway (see ledgerIdsOf). */
  requestId: string;
  /** The client's own x-request-id, kept for correlation only (null: it sent none). */
  clientRequestId: string | null;
  caller: Caller;
  projectId: string;
  endpoint: string;
  lane: string | null;
  /** Prices in force at this instant apply (a price's `effective_from`). */
  startedAt: number;
  /** A media request: what it asks for, priced per image, character or second instead of tokens. */
  media?: MediaUse | undefined;
};

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

/**
 * The ledger id of a request and the client's correlation id. The gateway
 * mints the ledger id: the request id when the gateway made it, else a fresh
 * UUID, because a client that sends one id twice (in any letter case: the
 * request-id middleware adopts it lower-cased) must not get the second
 * request for free. The client's id is kept beside it, never as a key.
 */
function ledgerIdsOf(res: Response): { requestId: string; clientRequestId: string | null } {
  const id = requestIdOf(res);
  const sent = res.req.headers['x-request-id'];
  const adopted = typeof sent === 'string' && id !== '' && sent.toLowerCase() === id;
  if (adopted) return { requestId: randomUUID(), clientRequestId: id };
  return { requestId: id || randomUUID(), clientRequestId: null };
}

/**
 * How a request ended: the status the caller got, the target that answered
 * (if any), its usage, and whether the usage is our estimate.
 */
export type RequestOutcome = {
  status: number;
  target: Target | undefined;
  usage: (ChatUsage & { cached_tokens?: number }) | null;
  estimated?: boolean;
  /**
   * Prompt-cache counts when the provider reported them (Anthropic's cache
   * reads and writes; see cacheTokensOf). `read` is the ledger's cached tokens
   * when `usage.cached_tokens` is not set; `write` its cache-write tokens
   * (part of the prompt tokens, priced at the model's `cache_write`).
   */
  cache?: CacheTokens | null;
  /**
   * A stream continued on other targets after a cut: each target's share of
   * `usage`, so that each is priced at its own target's price.
   */
  segments?: ReadonlyArray<{ target: Target; usage: ChatUsage | null; cache?: CacheTokens | null }>;
  /** The error code the caller got (request log), when it got one. */
  error?: string;
  /** The answer's text (choice 0), kept by the request log only when the project captures content. */
  answer?: string | undefined;
  /** A stream continued on other targets after a cut (the record's `continued`). */
  continued?: boolean;
};

/** Status recorded when the client disconnected before the answer (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499;

/** The ledger record of an outcome: tokens, cost at the answering target's price, BYOK flag. */
export function toLedgerRecord(
  rt: PricingPorts,
  base: AccountingBase,
  outcome: RequestOutcome,
  storedKeys: StoredKeys,
): LedgerRecord {
  const usage = outcome.usage;
  const target = outcome.target;
  const now = rt.clock();
  const tokens = {
    promptTokens: usage?.prompt_tokens ?? 0,
    completionTokens: usage?.completion_tokens ?? 0,
    cachedTokens: usage?.cached_tokens ?? outcome.cache?.read ?? 0,
    cacheWriteTokens: outcome.cache?.write ?? 0,
  };
  const record: LedgerRecord = {
    requestId: base.requestId,
    clientRequestId: base.clientRequestId,
    userId: base.caller.userId,
    apiKeyId: base.caller.apiKeyId,
    projectId: base.projectId,
    endpoint: base.endpoint,
    lane: base.lane,
    provider: target?.provider ?? null,
    model: target?.model ?? null,
    status: outcome.status,
    ...tokens,
    totalTokens: usage?.total_tokens ?? tokens.promptTokens + tokens.completionTokens,
    costMicros: base.media
      ? outcome.status === 200
        ? mediaCostMicros(
            priceOf(rt.prices, target?.provider ?? null, target?.model ?? null, base.startedAt),
            base.media,
          )
        : 0
      : outcomeCost(rt, base.startedAt, outcome, tokens),
    currency: rt.currency,
    estimated: outcome.estimated ?? false,
    byok: target ? storedKeys[target.provider] !== undefined : false,
    latencyMs: now - base.startedAt,
    createdAt: now,
  };
  // Only a continued stream carries the field: every other record stays as it was.
  if (outcome.continued) record.continued = true;
  return record;
}

/**
 * Completion tokens as priced: reasoning tokens that a provider reports
 * outside `completion_tokens` (but inside `total_tokens`) are output too.
 */
export function billedCompletion(usage: ChatUsage | null | undefined): number {
  if (!usage) return 0;
  return Math.max(usage.completion_tokens, usage.total_tokens - usage.prompt_tokens);
}

/**
 * The cost of an outcome at the prices in force at `at`: each continued
 * stream's segment at its own target's price, else the answering target's.
 */
function outcomeCost(
  rt: { prices: PriceTable },
  at: number,
  outcome: RequestOutcome,
  tokens: TokenCounts,
): number {
  const price = (t: Target | undefined) => priceOf(rt.prices, t?.provider ?? null, t?.model ?? null, at);
  if (!outcome.segments || outcome.segments.length < 2)
    return costMicros(price(outcome.target), {
      ...tokens,
      completionTokens: billedCompletion(outcome.usage),
    });
  return outcome.segments.reduce(
    (sum, s) =>
      sum +
      costMicros(price(s.target), {
        promptTokens: s.usage?.prompt_tokens ?? 0,
        completionTokens: billedCompletion(s.usage),
        cachedTokens: s.cache?.read ?? 0,
        cacheWriteTokens: s.cache?.write ?? 0,
      }),
    0,
  );
}

/** What an accounted request handler gets. */
export type AccountedCall = {
  storedKeys: StoredKeys;
  clientSignal: AbortSignal;
  requestId: string;
  /**
   * Reserves for another upstream call that will be charged (a stream's
   * continuation: its prompt again and a new allowance); throws 429 like the
   * first reservation. Returns the completion cap when less was left.
   */
  reserveMore(need: { promptTokens: number; completionTokens: number }): Promise<number | undefined>;
};

/**
 * What a handler hands back to the frame: how the request ended, and the
 * answer's last byte(s), which the frame sends only once the request's
 * record is durable (the one place that rule lives).
 */
export type Answered = {
  outcome: RequestOutcome;
  /**
   * Completes the answer. `recorded` false: the record could not be kept
   * (ledger, Postgres and spool all refused), so the answer must not
   * complete: a JSON answer becomes 503, a stream ends in an error event.
   */
  last(recorded: boolean): Promise<void> | void;
};

/** An answer `send` completes once it is recorded; 503 service unavailable when it could not be. */
export function answerWith(outcome: RequestOutcome, send: () => void | Promise<void>): Answered {
  return {
    outcome,
    async last(recorded) {
      if (!recorded) throw new AppError('service_unavailable');
      await send();
    },
  };
}

/** A JSON answer (answerWith). */
export function jsonAnswer(res: Response, outcome: RequestOutcome, body: unknown): Answered {
  return answerWith(outcome, () => sendJson(res, body));
}

/**
 * The frame of every AI route: admission (admission/admit.ts: who calls,
 * key rules, paid lanes, a budget reservation before any upstream call),
 * a chat's max_tokens capped to what the budgets have left, the caller's
 * stored keys, a client-gone
 * signal, exactly one ledger record whatever `run` returns or throws, and
 * the answer's last byte only after that record is durable (Answered).
 * Failed attempts of a fallback chain are not charged: only the answering
 * target's usage is in the outcome.
 */
export async function runAccounted(
  rt: AccountingPorts,
  res: Response,
  request: AccountedRequest,
  run: (call: AccountedCall) => Promise<Answered>,
): Promise<void> {
  const startedAt = rt.clock();
  // Whether the project keeps prompts and answers: a cached set per owner (observability/capture.ts),
  // read while admission runs; settled before it ends on a cache hit.
  const capturing = rt.requestLog?.capturedProjects(callerIdOf(res));
  // Key rules, paid lanes, the budget reservation (and a cached key's check): admission/admit.ts.
  const {
    caller,
    storedKeys,
    budgetRequest,
    reservation: first,
  } = await admit(rt.admission, res, request, startedAt);
  const base: AccountingBase = {
    ...ledgerIdsOf(res),
    caller,
    startedAt,
    projectId: request.projectId,
    endpoint: request.endpoint,
    lane: request.lane,
    media: request.media,
  };
  if (request.chat && first.completionCap !== undefined) capCompletion(request.chat, first.completionCap);
  const reservation = combinedReservation(first);
  const reserveMore = async (need: { promptTokens: number; completionTokens: number }) => {
    const more = await rt.budgets.reserve({ ...budgetRequest, ...need, continuation: true });
    reservation.add(more);
    return more.completionCap;
  };
  // The request log's attempts are collected only while it is on.
  const collected: RequestAttempts = {
    billable: [],
    log: rt.requestLog ? { startedAt: base.startedAt, attempts: [] } : undefined,
  };
  const attempts = collected.billable;
  const capture = capturing !== undefined && (await capturing).has(request.projectId);
  const finish = createFinish(rt, base, reservation, storedKeys, (record, outcome) => {
    if (rt.requestLog && collected.log)
      rt.requestLog.record(record, collected.log, {
        userAgent: res.req.headers['user-agent'],
        error: outcome.error,
        content: capture ? captureContent(request.chat?.params.messages, outcome.answer) : undefined,
      });
  });
  const clientSignal = clientAbortSignal(res);
  let answered: Answered;
  try {
    const call = { storedKeys, clientSignal, requestId: requestIdOf(res), reserveMore };
    answered = await collectAttempts(collected, () => run(call));
  } catch (err) {
    if (err instanceof ClientGoneError) {
      const gone = { status: CLIENT_CLOSED_STATUS, target: undefined, usage: null, error: 'client_gone' };
      await finish(gone).catch(() => {});
      recordAttempts(rt, base, attempts);
      return;
    }
    if (err instanceof FallbackExhaustedError) {
      const failed = { status: err.error.status, target: err.lastTarget, usage: null, error: err.error.code };
      await finish(failed).catch(() => {});
      recordAttempts(rt, base, attempts);
      throw err.error;
    }
    const error = isAppError(err) ? err.code : 'internal_error';
    await finish({ status: isAppError(err) ? err.status : 500, target: undefined, usage: null, error }).catch(
      () => {},
    );
    throw err;
  }
  // The last byte waits for the record: whatever happens to the process afterwards, a complete answer has one.
  const recorded = await finish(answered.outcome).then(
    () => true,
    () => false,
  );
  await answered.last(recorded);
  recordAttempts(rt, base, attempts);
}

/**
 * Failed attempts the provider may bill (timed out after the request was
 * sent), kept for an operator in usage_attempts beside the request's record,
 * never charged: best effort, after the answer, logged when it fails.
 */
function recordAttempts(
  rt: AccountingPorts,
  base: AccountingBase,
  attempts: readonly BillableAttempt[],
): void {
  if (attempts.length === 0 || !rt.recordAttempts) return;
  rt.recordAttempts(
    attempts.map((a) => ({
      requestId: base.requestId,
      userId: base.caller.userId,
      apiKeyId: base.caller.apiKeyId,
      projectId: base.projectId,
      endpoint: base.endpoint,
      provider: a.target.provider,
      model: a.target.model,
      outcome: a.outcome,
      status: a.status,
      byok: a.byok,
      latencyMs: Math.round(a.latencyMs),
    })),
  ).catch((err: unknown) =>
    rt.logger.error(
      { err: err instanceof Error ? err.message : String(err), request_id: base.requestId },
      'billable upstream attempts not recorded',
    ),
  );
}

function createFinish(
  rt: AccountingPorts,
  base: AccountingBase,
  reservation: Reservation,
  storedKeys: StoredKeys,
  /** Told every record (the request log); never throws. */
  onRecord: (record: LedgerRecord, outcome: RequestOutcome) => void,
): (outcome: RequestOutcome) => Promise<void> {
  let done: Promise<void> | null = null;
  return (outcome) => {
    done ??= (async () => {
      const record = toLedgerRecord(rt, base, outcome, storedKeys);
      annotateRecord(record);
      rt.metrics.requestFinished(record);
      onRecord(record, outcome);
      // No attributes: the request span, its parent, carries the ids.
      const span = tracingOn() ? startSpan('gateway.ledger.append', undefined) : undefined;
      // Issued in the same tick: one pipelined round trip to Redis.
      const [appended, settled] = await Promise.allSettled([
        rt.ledger.append(record),
        reservation.settle({ totalTokens: record.totalTokens, costMicros: record.costMicros }),
      ]);
      endSpan(span, undefined, appended.status === 'rejected' ? 'ledger_unavailable' : undefined);
      if (settled.status === 'rejected') {
        // The reservation stays counted until its window ends: the budget errs on the safe side.
        rt.logger.error({ err: String(settled.reason), request_id: base.requestId }, 'budget not settled');
      }
      if (appended.status === 'rejected') {
        rt.logger.error(
          { err: String(appended.reason), request_id: base.requestId, record },
          'usage record not durable; the answer is not completed',
        );
        throw new AppError('service_unavailable', { cause: appended.reason });
      }
    })();
    return done;
  };
}
