import { AppError } from '@platform/errors';
import { loadedOpenAiSdk } from './openai-sdk';

/** How one upstream attempt ended; the label of `ai_upstream_attempts_total`. */
export type AttemptOutcome =
  | 'success'
  | 'timeout'
  | 'connection_error'
  | 'rate_limited'
  | 'server_error'
  | 'provider_refused'
  | 'request_rejected'
  /** The prompt does not fit this model's context window; another model may take it. */
  | 'context_exceeded'
  /** The provider's content policy refused the request; every target would, so the chain ends. */
  | 'content_refused'
  /**
   * The target refuses an answer ending in an assistant message (a continuation's
   * prefill, e.g. Anthropic's newest models): learned, and the next target is tried.
   */
  | 'prefill_refused'
  | 'aborted';

/** Outcomes after which the next target is tried. */
const RETRYABLE: ReadonlySet<AttemptOutcome> = new Set([
  'timeout',
  'connection_error',
  'rate_limited',
  'server_error',
  'provider_refused',
  'context_exceeded',
  'prefill_refused',
]);

export function isRetryable(outcome: AttemptOutcome): boolean {
  return RETRYABLE.has(outcome);
}

/**
 * What the gateway read from a provider's error body: only the verdict and a
 * short machine code, never the provider's message (it may quote the key or
 * the prompt), so it is safe to log and to pass on.
 */
export type ProviderErrorReading = {
  kind: 'context_length' | 'content_policy' | 'prefill' | 'other';
  /** The provider's own code (e.g. `content_policy_violation`), when it is a plain identifier. */
  reason: string | null;
};

/** A non-2xx answer to one of our own clients: the pooled chat client (openai-chat.ts) or ElevenLabs over fetch. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly retryAfter: string | null,
    readonly reading: ProviderErrorReading | null = null,
  ) {
    super(`upstream answered ${status}`);
    this.name = 'UpstreamHttpError';
  }
}

/** Longest provider text looked at; a body is read up to MAX_ERROR_BODY anyway. */
const MAX_READ_TEXT = 4096;

/** Codes providers use for a prompt over the model's context window (OpenAI, Groq, Cerebras, vLLM...). */
const CONTEXT_CODES = new Set([
  'context_length_exceeded',
  'context_window_exceeded',
  'string_above_max_length',
  'prompt_too_long',
  'request_too_large',
]);
/** Phrases of the same condition in providers' messages that carry no such code. */
const CONTEXT_PHRASES = [
  'context length',
  'context_length',
  'context window',
  'maximum context',
  'prompt is too long',
  'input token count',
  'exceeds the maximum number of tokens',
  'too many tokens',
];
/** Codes and types of content-policy refusals (OpenAI, Azure, Google, OpenRouter moderation...). */
const POLICY_CODES = new Set([
  'content_policy_violation',
  'content_filter',
  'content_filtered',
  'moderation_blocked',
  'responsibleaipolicyviolation',
  'safety',
  'prohibited_content',
  'blocked_content',
  'flagged_input',
]);
/** Codes and phrases of a refused assistant prefill (Anthropic: "does not support assistant message prefill"). */
const PREFILL_CODES = new Set([
  'prefill_rejected',
  'prefill_not_supported',
  'assistant_prefill_not_supported',
]);
const PREFILL_PHRASES = [
  'assistant message prefill',
  'prefill is not supported',
  'must end with a user message',
];
const POLICY_PHRASES = [
  'content policy',
  'content management policy',
  'safety system',
  'flagged',
  'moderation',
];

/** A plain identifier (letters, digits, `_.-`, at most 64), or null: nothing else reaches a caller. */
function safeCode(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return null;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const ok =
      (c >= 48 && c <= 57) ||
      (c >= 65 && c <= 90) ||
      (c >= 97 && c <= 122) ||
      c === 95 ||
      c === 46 ||
      c === 45;
    if (!ok) return null;
  }
  return value;
}

/**
 * Reads an OpenAI-style error body (`{error: {message, type, code}}`, or a
 * bare `{message, code}`) for the two verdicts that change what the gateway
 * does: the prompt is too long for this model (try the next), or the content
 * policy refused it (stop, say why). `text` is at most MAX_ERROR_BODY long;
 * only its first MAX_READ_TEXT characters of message are looked at.
 */
export function readProviderError(text: string): ProviderErrorReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'other', reason: null };
  }
  const outer = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const inner = (typeof outer.error === 'object' && outer.error !== null ? outer.error : outer) as Record<
    string,
    unknown
  >;
  const code = safeCode(inner.code) ?? safeCode((inner.innererror as { code?: unknown } | undefined)?.code);
  const type = safeCode(inner.type);
  const status = safeCode(inner.status);
  const message =
    typeof inner.message === 'string' ? inner.message.slice(0, MAX_READ_TEXT).toLowerCase() : '';
  const ids = [code, type, status].filter((v): v is string => v !== null).map((v) => v.toLowerCase());
  if (ids.some((id) => CONTEXT_CODES.has(id)) || CONTEXT_PHRASES.some((p) => message.includes(p)))
    return { kind: 'context_length', reason: code };
  if (ids.some((id) => POLICY_CODES.has(id)) || POLICY_PHRASES.some((p) => message.includes(p)))
    return { kind: 'content_policy', reason: code ?? type ?? 'content_policy' };
  if (ids.some((id) => PREFILL_CODES.has(id)) || PREFILL_PHRASES.some((p) => message.includes(p)))
    return { kind: 'prefill', reason: code ?? 'prefill_rejected' };
  return { kind: 'other', reason: code };
}

/** A 2xx answer whose body is not what an OpenAI-compatible provider sends (or an error event mid-stream, sse-parser.ts). */
export class UpstreamProtocolError extends Error {
  constructor(
    message: string,
    /**
     * `garbled`: unparseable events in a row; `error_event`: the provider sent an error
     * mid-stream; `cut`: the body ended before `[DONE]` or a finish reason (a connection cut).
     */
    readonly kind: 'unreadable' | 'garbled' | 'error_event' | 'cut' = 'unreadable',
  ) {
    super(message);
    this.name = 'UpstreamProtocolError';
  }
}

/** TLS verification failures carry OpenSSL's names rather than an `E...` code. */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

/**
 * A network-level code of the provider's side: undici's socket errors
 * (UND_ERR_SOCKET, UND_ERR_CONNECT_TIMEOUT...), system ones of any spelling
 * (ECONNREFUSED, ECONNRESET, ENOTFOUND, EAI_AGAIN, EAI_NONAME...), and TLS
 * failures (ERR_TLS_*, ERR_SSL_*, certificate errors). These are the
 * provider's failure, never the gateway's own dependency being down.
 */
export function isNetworkErrorCode(code: string): boolean {
  if (code.startsWith('UND_ERR') || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) return true;
  if (TLS_CODES.has(code)) return true;
  // E followed by capitals, digits and underscores: ECONNRESET, EAI_AGAIN, EPROTO.
  if (code.length < 2 || code.charCodeAt(0) !== 69) return false;
  for (let i = 1; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
}

/** The network code of `err` or of an error it wraps (fetch's TypeError, AggregateError of a dual-stack connect). */
function networkCodeOf(err: unknown): string | null {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && isNetworkErrorCode(code)) return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      for (const inner of errors) {
        const innerCode = (inner as { code?: unknown } | null)?.code;
        if (typeof innerCode === 'string' && isNetworkErrorCode(innerCode)) return innerCode;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** A connection the provider dropped before answering: worth one retry on the same target. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function outcomeOfStatus(status: number): AttemptOutcome {
  if (status === 429) return 'rate_limited';
  if (status >= 500 || status === 408) return 'server_error';
  // 401/403/404 mean our key or the configured model is wrong at this
  // provider, not that the caller sent something bad: another target may work.
  if (status === 401 || status === 403 || status === 404) return 'provider_refused';
  return 'request_rejected';
}

/** Sorts an error of one attempt; `timedOut`/`clientGone` say why our own signal fired. */
export type AttemptFailure = {
  outcome: AttemptOutcome;
  status: number | undefined;
  retryAfter: string | null;
  /** The provider's reason code of a content-policy refusal (or context overflow), see readProviderError. */
  reason?: string | null;
  /** The connection was dropped (reset) rather than refused, unresolvable or untrusted. */
  reset?: boolean;
};

function outcomeOfHttp(err: UpstreamHttpError): AttemptFailure {
  const base = { status: err.status, retryAfter: err.retryAfter };
  if (err.status >= 400 && err.status < 500 && err.status !== 429 && err.reading) {
    if (err.reading.kind === 'context_length')
      return { ...base, outcome: 'context_exceeded', reason: err.reading.reason };
    if (err.reading.kind === 'content_policy')
      return { ...base, outcome: 'content_refused', reason: err.reading.reason };
    if (err.reading.kind === 'prefill')
      return { ...base, outcome: 'prefill_refused', reason: err.reading.reason };
  }
  return { ...base, outcome: outcomeOfStatus(err.status) };
}

export function classifyUpstreamError(
  err: unknown,
  flags: { timedOut: boolean; clientGone: boolean },
): AttemptFailure {
  if (flags.clientGone) return { outcome: 'aborted', status: undefined, retryAfter: null };
  if (flags.timedOut) return { outcome: 'timeout', status: undefined, retryAfter: null };
  if (err instanceof UpstreamHttpError) return outcomeOfHttp(err);
  if (err instanceof UpstreamProtocolError) {
    // A cut body is what a closed socket is when undici reads it as the message's end.
    if (err.kind === 'cut')
      return { outcome: 'connection_error', status: undefined, retryAfter: null, reset: true };
    return { outcome: 'server_error', status: undefined, retryAfter: null };
  }
  const code = networkCodeOf(err);
  if (code !== null) {
    const failure: AttemptFailure = { outcome: 'connection_error', status: undefined, retryAfter: null };
    if (RESET_CODES.has(code)) failure.reset = true;
    return failure;
  }
  // The SDK's classes only once a client of it exists (media, embeddings).
  // Under Jest the SDK's timeout surfaces as a plain APIConnectionError (realm
  // crossing loses the name), so the base class is what is checked.
  const OpenAI = loadedOpenAiSdk();
  if (OpenAI && err instanceof OpenAI.APIConnectionError) {
    return { outcome: 'connection_error', status: undefined, retryAfter: null };
  }
  if (OpenAI && err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const retryAfter = err.headers?.get('retry-after') ?? null;
    return { outcome: outcomeOfStatus(err.status), status: err.status, retryAfter };
  }
  // fetch failures (ElevenLabs) and broken streams are connection-level problems.
  if (err instanceof TypeError || (err instanceof Error && /terminated|socket|ECONN/i.test(err.message))) {
    return { outcome: 'connection_error', status: undefined, retryAfter: null, reset: true };
  }
  if (OpenAI && err instanceof OpenAI.OpenAIError)
    return { outcome: 'server_error', status: undefined, retryAfter: null };
  throw err;
}

/** Default wait we advertise when the provider's 429 carried no usable Retry-After. */
const DEFAULT_RETRY_AFTER_S = 30;

/** Retry-After in milliseconds (seconds or HTTP date), or null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  if (!Number.isNaN(date)) return Math.max(0, date - now);
  return null;
}

/** Retry-After in whole seconds from a header value (seconds or HTTP date). */
export function retryAfterSeconds(value: string | null, now: number): number {
  if (value) {
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
    const date = Date.parse(value);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  }
  return DEFAULT_RETRY_AFTER_S;
}

/**
 * The error the caller sees when no target answered, decided by how the last
 * target failed: the spec's 504 for a timeout, 429 with Retry-After when the
 * provider is still rate limiting us, otherwise a generic upstream error. No
 * provider text is passed on: it may quote the key or the prompt.
 */
export function toFinalError(
  last: { outcome: AttemptOutcome; retryAfter: string | null; reason?: string | null } | undefined,
  now: number,
): AppError {
  if (!last) return new AppError('upstream_unavailable');
  switch (last.outcome) {
    case 'content_refused':
      // The provider's reason code only: a plain identifier, checked by readProviderError.
      return new AppError('upstream_content_policy', {
        details: [{ path: 'provider_reason', message: last.reason ?? 'content_policy' }],
      });
    case 'context_exceeded':
      return new AppError('upstream_context_length');
    case 'timeout':
      return new AppError('upstream_timeout');
    case 'rate_limited':
      return new AppError('rate_limited', {
        headers: { 'Retry-After': String(retryAfterSeconds(last.retryAfter, now)) },
      });
    case 'request_rejected':
    // Only the caller's own trailing assistant message ends a chain so (a continuation handles its own).
    case 'prefill_refused':
      return new AppError('upstream_rejected');
    default:
      return new AppError('upstream_error');
  }
}
