import { AppError } from '@platform/errors';
import OpenAI from 'openai';

/** How one upstream attempt ended; the label of `ai_upstream_attempts_total`. */
export type AttemptOutcome =
  | 'success'
  | 'timeout'
  | 'connection_error'
  | 'rate_limited'
  | 'server_error'
  | 'provider_refused'
  | 'request_rejected'
  | 'aborted';

/** Outcomes after which the next target is tried. */
const RETRYABLE: ReadonlySet<AttemptOutcome> = new Set([
  'timeout',
  'connection_error',
  'rate_limited',
  'server_error',
  'provider_refused',
]);

export function isRetryable(outcome: AttemptOutcome): boolean {
  return RETRYABLE.has(outcome);
}

/** An HTTP failure from a non-SDK upstream (ElevenLabs over fetch). */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly retryAfter: string | null,
  ) {
    super(`upstream answered ${status}`);
    this.name = 'UpstreamHttpError';
  }
}

/** A 2xx answer whose body is not what an OpenAI-compatible provider sends (or an error event mid-stream). */
export class UpstreamProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamProtocolError';
  }
}

/** undici's socket-level errors (UND_ERR_SOCKET, UND_ERR_CONNECT_TIMEOUT, ...) and system ones (ECONNREFUSED, ...). */
function isConnectionErrorCode(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('UND_ERR') || /^E[A-Z]+$/.test(code));
}

function outcomeOfStatus(status: number): AttemptOutcome {
  if (status === 429) return 'rate_limited';
  if (status >= 500 || status === 408) return 'server_error';
  // 401/403/404 mean our key or the configured model is wrong at this
  // provider, not that the caller sent something bad: another target may work.
  if (status === 401 || status === 403 || status === 404) return 'provider_refused';
  return 'request_rejected';
}

/** Sorts an error of one attempt; `timedOut`/`clientGone` say why our own signal fired. */
export function classifyUpstreamError(
  err: unknown,
  flags: { timedOut: boolean; clientGone: boolean },
): { outcome: AttemptOutcome; status: number | undefined; retryAfter: string | null } {
  if (flags.clientGone) return { outcome: 'aborted', status: undefined, retryAfter: null };
  if (flags.timedOut) return { outcome: 'timeout', status: undefined, retryAfter: null };
  if (err instanceof UpstreamHttpError) {
    return { outcome: outcomeOfStatus(err.status), status: err.status, retryAfter: err.retryAfter };
  }
  if (err instanceof UpstreamProtocolError)
    return { outcome: 'server_error', status: undefined, retryAfter: null };
  if (isConnectionErrorCode(err)) return { outcome: 'connection_error', status: undefined, retryAfter: null };
  // Under Jest the SDK's timeout surfaces as a plain APIConnectionError (realm
  // crossing loses the name), so the base class is what is checked.
  if (err instanceof OpenAI.APIConnectionError) {
    return { outcome: 'connection_error', status: undefined, retryAfter: null };
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const retryAfter = err.headers?.get('retry-after') ?? null;
    return { outcome: outcomeOfStatus(err.status), status: err.status, retryAfter };
  }
  // fetch failures (ElevenLabs) and broken streams are connection-level problems.
  if (err instanceof TypeError || (err instanceof Error && /terminated|socket|ECONN/i.test(err.message))) {
    return { outcome: 'connection_error', status: undefined, retryAfter: null };
  }
  if (err instanceof OpenAI.OpenAIError)
    return { outcome: 'server_error', status: undefined, retryAfter: null };
  throw err;
}

/** Default wait we advertise when the provider's 429 carried no usable Retry-After. */
const DEFAULT_RETRY_AFTER_S = 30;

/** Retry-After in whole seconds from a header value (seconds or HTTP date). */
export function retryAfterSeconds(value: string | null, now = Date.now()): number {
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
  last: { outcome: AttemptOutcome; retryAfter: string | null } | undefined,
): AppError {
  if (!last) return new AppError('upstream_unavailable');
  switch (last.outcome) {
    case 'timeout':
      return new AppError('upstream_timeout');
    case 'rate_limited':
      return new AppError('rate_limited', {
        headers: { 'Retry-After': String(retryAfterSeconds(last.retryAfter)) },
      });
    case 'request_rejected':
      return new AppError('upstream_rejected');
    default:
      return new AppError('upstream_error');
  }
}
