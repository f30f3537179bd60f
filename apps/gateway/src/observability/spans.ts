import { redactText } from '@platform/logging';
import {
  activeSpan,
  annotateSpan,
  endSpan,
  requestEvent,
  requestSpan,
  startSpan,
  type TraceSpan,
  tracingCapturesContent,
  tracingOn,
} from '@platform/service-kit';
import type { LedgerRecord } from '../usage/record';

/**
 * The gateway's spans and attributes (docs/observability.md): the OpenTelemetry
 * GenAI semantic conventions (`gen_ai.*`, names as in
 * @opentelemetry/semantic-conventions/incubating) plus the gateway's own
 * (`gateway.*`). No prompt or answer unless the operator asks for them
 * (captureChatContent); otherwise only ids, names, counts and outcomes. Every
 * function returns at once while tracing is off.
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
  const span = startSpan(`${operation} ${a.target.model}`, undefined, 'client');
  // Unsampled: the span carries its context to the provider call; nothing to record on it.
  if (!span?.isRecording()) return span;
  // Defaults (a first try, the server's key) are left out: fewer bytes per span to build and send.
  span
    .setAttribute('gen_ai.operation.name', operation)
    .setAttribute('gen_ai.provider.name', a.target.provider)
    .setAttribute('gen_ai.request.model', a.target.model)
    .setAttribute('gateway.target', `${a.target.provider}/${a.target.model}`)
    .setAttribute('gateway.target.position', a.position)
    .setAttribute('gateway.attempt', a.attempt)
    .setAttribute('gateway.breaker.state', a.breakerState);
  if (a.retry > 0) span.setAttribute('gateway.retry', a.retry);
  if (a.credential.byok) span.setAttribute('gateway.byok', true);
  return span;
}

/** Ends an attempt's span with its outcome; a failure carries `error.type` (the outcome) and the status. */
export function endAttemptSpan(
  span: TraceSpan,
  /** `outcome` is ai/providers/upstream-errors.ts `AttemptOutcome`. */
  result: { outcome: string; status: number | undefined; reason?: string | null },
  latencyMs: number,
): void {
  if (!span) return;
  span
    .setAttribute('gateway.attempt.outcome', result.outcome)
    .setAttribute('gateway.attempt.latency_ms', latencyMs);
  if (result.status !== undefined) span.setAttribute('http.response.status_code', result.status);
  if (result.reason) span.setAttribute('gateway.attempt.reason', result.reason);
  endSpan(span, undefined, result.outcome === 'success' ? undefined : result.outcome);
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
  const span = requestSpan();
  if (!span?.isRecording()) return;
  // Zero cached tokens, exact counts and the server's key are the usual case and left out.
  span
    .setAttribute('gen_ai.operation.name', operationOf(record.endpoint))
    .setAttribute('gen_ai.usage.input_tokens', record.promptTokens)
    .setAttribute('gen_ai.usage.output_tokens', record.completionTokens)
    .setAttribute('gateway.endpoint', record.endpoint)
    .setAttribute('gateway.project', record.projectId)
    .setAttribute('gateway.user_id', record.userId)
    .setAttribute('gateway.cost_micros', record.costMicros)
    .setAttribute('gateway.currency', record.currency)
    .setAttribute('gateway.status', record.status);
  // The ledger id is the request's own id (`platform.request_id`) unless the client sent one.
  if (record.clientRequestId) span.setAttribute('gateway.request_id', record.requestId);
  if (record.provider) span.setAttribute('gen_ai.provider.name', record.provider);
  if (record.model) span.setAttribute('gen_ai.response.model', record.model);
  if (record.cachedTokens > 0) span.setAttribute('gen_ai.usage.cache_read.input_tokens', record.cachedTokens);
  if (record.lane) span.setAttribute('gateway.lane', record.lane);
  if (record.apiKeyId) span.setAttribute('gateway.key_id', record.apiKeyId);
  if (record.estimated) span.setAttribute('gateway.tokens_estimated', true);
  if (record.byok) span.setAttribute('gateway.byok', true);
  if (record.status >= 400) span.setAttribute('error.type', String(record.status));
}

/**
 * The provider's own account of a chat answer, on the active attempt span:
 * set one by one, no attribute object built (at 100 % sampling, once per
 * answered chat).
 */
export function annotateChatResponse(completion: {
  model?: string;
  choices?: ReadonlyArray<{ finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}): void {
  const span = activeSpan();
  if (!span) return;
  if (completion.model) span.setAttribute('gen_ai.response.model', completion.model);
  const reasons: string[] = [];
  for (const choice of completion.choices ?? []) if (choice.finish_reason) reasons.push(choice.finish_reason);
  if (reasons.length > 0) span.setAttribute('gen_ai.response.finish_reasons', reasons);
  const usage = completion.usage;
  if (usage?.prompt_tokens !== undefined) span.setAttribute('gen_ai.usage.input_tokens', usage.prompt_tokens);
  if (usage?.completion_tokens !== undefined)
    span.setAttribute('gen_ai.usage.output_tokens', usage.completion_tokens);
}

/** Characters of captured messages kept per attribute; longer text is cut and marked. */
export const CAPTURE_MAX_CHARS = 16_384;

function captured(value: unknown): string {
  const text = redactText(JSON.stringify(value) ?? 'null');
  return text.length > CAPTURE_MAX_CHARS ? `${text.slice(0, CAPTURE_MAX_CHARS)}…[truncated]` : text;
}

/**
 * With OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true only: the
 * messages sent (`gen_ai.input.messages`) and, for a non-streamed answer, the
 * choices' messages (`gen_ai.output.messages`) on the active attempt span, as
 * JSON with secrets masked as captured prompts are (@platform/logging redactText) and
 * cut at CAPTURE_MAX_CHARS. Otherwise nothing, and nothing is serialised.
 */
export function captureChatContent(
  messages: unknown,
  choices?: ReadonlyArray<{ message?: unknown; finish_reason?: string | null }>,
): void {
  if (!tracingCapturesContent()) return;
  const attributes: Record<string, string> = { 'gen_ai.input.messages': captured(messages) };
  if (choices) attributes['gen_ai.output.messages'] = captured(choices.map((c) => c.message));
  annotateSpan(attributes);
}
