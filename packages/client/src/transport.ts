import { randomUUID } from 'node:crypto';
import {
  type ApiErrorDetail,
  type AttemptRecord,
  NetworkError,
  PlatformApiError,
  PlatformClientError,
} from './errors';
import {
  parseRetryAfter,
  planRetry,
  type RetryOptions,
  type RetryPolicy,
  type RetryState,
  resolveRetryPolicy,
} from './retry-policy';
import type { Sleep } from './sleep';

/** Reported before every retry, e.g. to log the request id of the failed attempt. */
export type RetryEvent = {
  method: string;
  path: string;
  /** The attempt that failed (1 = the first request). */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  /** Status of the failed attempt; absent for a network error. */
  status?: number;
  error: string;
  requestId: string;
};

/** Options every method accepts as its last argument. */
export type CallOptions = {
  /** Aborts the call at any point, backoff waits included; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Per-attempt time limit in ms; overrides the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Overrides the client's retry settings for this call; `false` sends exactly once. */
  retry?: RetryOptions | false;
};

/** What a client method hands to the transport. */
export type RequestSpec = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** False for calls that must not be repeated (non-idempotent writes without an idempotency key). */
  retryable: boolean;
};

/** Facts about the successful attempt, for building errors after the response arrived. */
export type AttemptContext = { requestId: string; attempts: number; history: readonly AttemptRecord[] };

export type Transport = {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
  retry: RetryPolicy;
  timeoutMs: number;
  sleep: Sleep;
  now: () => number;
  onRetry: ((event: RetryEvent) => void) | undefined;
};

class AttemptTimeout extends Error {}

/**
 * Sends one logical call with the spec's retry policy. `read` turns a 2xx
 * response into the result and runs under the attempt's timeout, so a body that
 * stalls or breaks off counts as a network error of that attempt and is retried.
 */
export async function executeCall<T>(
  transport: Transport,
  spec: RequestSpec,
  call: CallOptions,
  read: (response: Response, context: AttemptContext) => Promise<T>,
): Promise<T> {
  const policy = !spec.retryable ? resolveRetryPolicy(false) : resolveCallPolicy(transport, call);
  const url = buildUrl(transport.baseUrl, spec.path, spec.query);
  const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
  const timeoutMs = call.timeoutMs ?? transport.timeoutMs;
  const history: AttemptRecord[] = [];
  const state: RetryState = { retries: 0, serverErrorRetries: 0 };

  for (;;) {
    call.signal?.throwIfAborted();
    const attempt = history.length + 1;
    const sentId = randomUUID();
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new AttemptTimeout()), timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout.signal]) : timeout.signal;
    let delayMs: number | undefined;
    let failure: () => PlatformClientError;
    try {
      const response = await transport.fetch(url, {
        method: spec.method,
        headers: buildHeaders(transport, spec, sentId, body !== undefined),
        body,
        signal,
      });
      const requestId = response.headers.get('x-request-id') ?? sentId;
      if (response.ok) {
        try {
          return await read(response, { requestId, attempts: attempt, history: [...history] });
        } catch (err) {
          if (err instanceof PlatformClientError) throw err;
          throw new BodyReadError(err, requestId, response.status);
        }
      }
      const problem = await readErrorBody(response);
      const record = { attempt, requestId: problem.requestId ?? requestId, status: response.status };
      history.push({ ...record, error: problem.error });
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), transport.now());
      delayMs = planRetry({ kind: 'response', status: response.status, retryAfterMs }, state, policy);
      if (response.status >= 500 && response.status !== 504 && delayMs !== undefined) {
        state.serverErrorRetries += 1;
      }
      failure = () =>
        new PlatformApiError({
          ...record,
          error: problem.error,
          code: problem.code,
          details: problem.details,
          retryAfterMs,
          attempts: attempt,
          history: [...history],
        });
    } catch (err) {
      if (call.signal?.aborted) throw call.signal.reason;
      if (err instanceof PlatformClientError) throw err;
      const readError = err instanceof BodyReadError ? err : undefined;
      const message = describeNetworkError(readError?.cause ?? err, timeout.signal, timeoutMs);
      history.push({
        attempt,
        requestId: readError?.requestId ?? sentId,
        ...(readError ? { status: readError.status } : {}),
        error: message,
      });
      delayMs = planRetry({ kind: 'network' }, state, policy);
      failure = () =>
        new NetworkError(message, {
          requestId: lastResponseId(history),
          attempts: attempt,
          history: [...history],
          cause: readError?.cause ?? err,
        });
    } finally {
      clearTimeout(timer);
    }
    const last = history[history.length - 1]!;
    if (delayMs === undefined) throw failure();
    transport.onRetry?.({ method: spec.method, path: spec.path, delayMs, ...last });
    await transport.sleep(delayMs, call.signal);
    state.retries += 1;
  }
}

/** A 2xx whose body could not be read to the end: a network failure of that attempt. */
class BodyReadError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly requestId: string,
    readonly status: number,
  ) {
    super('response body could not be read');
  }
}

function resolveCallPolicy(transport: Transport, call: CallOptions): RetryPolicy {
  return call.retry === undefined ? transport.retry : resolveRetryPolicy(call.retry);
}

function lastResponseId(history: readonly AttemptRecord[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i -= 1) {
    const entry = history[i]!;
    if (entry.status !== undefined) return entry.requestId;
  }
  return undefined;
}

function buildUrl(baseUrl: string, path: string, query: RequestSpec['query']): string {
  const url = `${baseUrl}${path}`;
  if (!query) return url;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  const search = params.toString();
  return search ? `${url}?${search}` : url;
}

function buildHeaders(
  transport: Transport,
  spec: RequestSpec,
  requestId: string,
  hasBody: boolean,
): Record<string, string> {
  return {
    accept: 'application/json',
    ...(hasBody ? { 'content-type': 'application/json' } : {}),
    ...transport.headers,
    ...spec.headers,
    'x-request-id': requestId,
  };
}

type ErrorBodyFacts = { error: string; code?: string; requestId?: string; details?: ApiErrorDetail[] };

/** Reads `{error, code, request_id, details?}`; a body that is not ours (a proxy's HTML page) gives `http_<status>`. */
async function readErrorBody(response: Response): Promise<ErrorBodyFacts> {
  const fallback = { error: `http_${response.status}` };
  let text: string;
  try {
    text = await response.text();
  } catch {
    return fallback;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return fallback;
    const { error, code, request_id, details } = parsed as Record<string, unknown>;
    return {
      error: typeof error === 'string' ? error : fallback.error,
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof request_id === 'string' ? { requestId: request_id } : {}),
      ...(Array.isArray(details) ? { details: details as ApiErrorDetail[] } : {}),
    };
  } catch {
    return fallback;
  }
}

function describeNetworkError(err: unknown, timeout: AbortSignal, timeoutMs: number): string {
  if (timeout.aborted) return `no response within ${timeoutMs} ms`;
  // Duck-typed: fetch's errors come from another realm under Jest, where instanceof fails.
  const outer = err as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  const detail = outer?.cause?.code ?? outer?.cause?.message ?? outer?.message;
  return typeof detail === 'string' && detail !== '' ? `network error: ${detail}` : 'network error';
}
