import {
  annotateRequest,
  endSpan,
  requestEvent,
  startSpan,
  type TraceSpan,
  tracingOn,
} from '@platform/service-kit';
import type { LedgerRecord } from '../usage/record';

/**
 * The gateway's spans and attributes (docs/observability.md): the OpenTelemetry
 * GenAI semantic conventions (`gen_ai.*`, names as in
 * @opentelemetry/semantic-conventions/incubating) plus the gateway's own
 * (`gateway.*`). Never a prompt or an answer: only ids, names, counts and
 * outcomes. Every function returns at once while tracing is off.
 */

/** Endpoints that are not a chat, by their `gen_ai.operation.name`; every chat wire format is `chat`. */
const NOT_CHAT: Readonly<Record<string, string>> = {
  image: 'image_generation',
  embeddings: 'embeddings',
  tts: 'tts',
  music: 'music',
  soundfx: 'soundfx',
  count_tokens: 'count_tokens',
};

/** `gen_ai.operation.name` of an endpoint. */
function operationOf(endpoint: string): string {
  return NOT_CHAT[endpoint] ?? 'chat';
}

/** A lane's target as far as spans need it (ai/config/lanes.ts `Target`; not imported: ai imports this folder). */
type Target = { provider: string; model: string };

/** What the fallback loop knows when it starts an attempt. */
export type AttemptStart = {
  endpoint: string;
  target: Target;
  /** The caller's own key (BYOK) or the server's. */
  credential: { byok: boolean };
  /** 1-based position of the target in the lane. */
  position: number;
  /** 0 for the first try on this target, 1 for its retry. */
  retry: number;
  /** 1-based number of the attempt within the request (retries and fallbacks count). */
  attempt: number;
  /** `closed`, or `half_open` when this attempt is the breaker's probe. */
  breakerState: string;
};

/** A CLIENT span for one upstream attempt, named `<operation> <model>` as the GenAI conventions ask. */
export function startAttemptSpan(a: AttemptStart): TraceSpan {
  // Tracing off: no attributes built on the request path.
  if (!tracingOn()) return undefined;
  const operation = operationOf(a.endpoint);
  return startSpan(
    `${operation} ${a.target.model}`,
    {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': a.target.provider,
      'gen_ai.request.model': a.target.model,
      'gateway.endpoint': a.endpoint,
      'gateway.target': `${a.target.provider}/${a.target.model}`,
      'gateway.target.position': a.position,
      'gateway.attempt': a.attempt,
      'gateway.retry': a.retry,
      'gateway.byok': a.credential.byok,
      'gateway.breaker.state': a.breakerState,
    },
    'client',
  );
}

/** Ends an attempt's span with its outcome; a failure carries `error.type` (the outcome) and the status. */
export function endAttemptSpan(
  span: TraceSpan,
  /** `outcome` is ai/providers/upstream-errors.ts `AttemptOutcome`. */
  result: { outcome: string; status: number | undefined; reason?: string | null },
  latencyMs: number,
): void {
  if (!span) return;
  const attributes = {
    'gateway.attempt.outcome': result.outcome,
    'gateway.attempt.latency_ms': latencyMs,
    ...(result.status !== undefined ? { 'http.response.status_code': result.status } : {}),
    ...(result.reason ? { 'gateway.attempt.reason': result.reason } : {}),
  };
  endSpan(span, attributes, result.outcome === 'success' ? undefined : result.outcome);
}

/** A target passed over without an attempt (cooling down, no key): an event on the request span. */
export function targetSkipped(target: Target, why: 'breaker_open' | 'no_key'): void {
  // Tracing off: no attributes built on the request path.
  if (!tracingOn()) return;
  requestEvent('gateway.target.skipped', {
    'gateway.target': `${target.provider}/${target.model}`,
    'gateway.skip.reason': why,
    ...(why === 'breaker_open' ? { 'gateway.breaker.state': 'open' } : {}),
  });
}

/** The request's outcome as the ledger recorded it, on the request span: who, what, how much. */
export function annotateRecord(record: LedgerRecord): void {
  // Tracing off: no attributes built on the request path.
  if (!tracingOn()) return;
  annotateRequest(
    {
      'gen_ai.operation.name': operationOf(record.endpoint),
      ...(record.provider ? { 'gen_ai.provider.name': record.provider } : {}),
      ...(record.model ? { 'gen_ai.response.model': record.model } : {}),
      'gen_ai.usage.input_tokens': record.promptTokens,
      'gen_ai.usage.output_tokens': record.completionTokens,
      'gen_ai.usage.cache_read.input_tokens': record.cachedTokens,
      'gateway.endpoint': record.endpoint,
      ...(record.lane ? { 'gateway.lane': record.lane } : {}),
      'gateway.project': record.projectId,
      ...(record.apiKeyId ? { 'gateway.key_id': record.apiKeyId } : {}),
      'gateway.user_id': record.userId,
      'gateway.request_id': record.requestId,
      'gateway.cost_micros': record.costMicros,
      'gateway.currency': record.currency,
      'gateway.tokens_estimated': record.estimated,
      'gateway.byok': record.byok,
      'gateway.status': record.status,
    },
    record.status >= 400 ? String(record.status) : undefined,
  );
}

/** The provider's own account of a chat answer, on the active attempt span. */
export function chatResponseAttributes(completion: {
  model?: string;
  choices?: ReadonlyArray<{ finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}): Record<string, string | number | string[]> {
  const reasons = (completion.choices ?? []).flatMap((c) => (c.finish_reason ? [c.finish_reason] : []));
  return {
    ...(completion.model ? { 'gen_ai.response.model': completion.model } : {}),
    ...(reasons.length > 0 ? { 'gen_ai.response.finish_reasons': reasons } : {}),
    ...(completion.usage?.prompt_tokens !== undefined
      ? { 'gen_ai.usage.input_tokens': completion.usage.prompt_tokens }
      : {}),
    ...(completion.usage?.completion_tokens !== undefined
      ? { 'gen_ai.usage.output_tokens': completion.usage.completion_tokens }
      : {}),
  };
}
