import type { RetryOptions } from './retry-policy';
import type { Sleep } from './sleep';
import type { RetryEvent } from './transport';

/** Options of `createPaymentClient` and `createGatewayClient`. */
export type ClientOptions = {
  /** Base URL of the service, e.g. `https://payment.localhost:8443`; a trailing slash is ignored. */
  baseUrl: string;
  /** API key, sent as `X-API-Key` (payment) or `x-api-key` (gateway). */
  apiKey: string;
  /** A fetch implementation; defaults to the global `fetch` of Node 18+. */
  fetch?: typeof fetch;
  /** Retry settings (see `RetryOptions`); `false` sends every request exactly once. */
  retry?: RetryOptions | false;
  /**
   * Time limit of one attempt in ms, until the whole body is read (for a stream:
   * until its headers arrive). An attempt that runs out counts as a network error.
   */
  timeoutMs?: number;
  /** Called before each retry, e.g. to log the request id of the failed attempt. */
  onRetry?: (event: RetryEvent) => void;
  /** The wait between retries; replace it to observe or shorten the backoff (tests). */
  sleep?: Sleep;
  /** The clock used to turn an HTTP-date `Retry-After` into a wait. */
  now?: () => number;
};

/**
 * The input type of a zod schema (what a caller may send, with defaults still
 * optional), spelled out so the declarations need no direct zod dependency.
 */
export type InputOf<T> = T extends { _zod: { input: unknown } } ? T['_zod']['input'] : never;

/** Removes trailing slashes and checks the URL early, so a typo fails at construction. */
export function normalizeBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`baseUrl must be an http(s) URL, got ${url.protocol}`);
  }
  return baseUrl.replace(/\/+$/, '');
}

/** Refuses keys that would be sent as an empty or broken header. */
export function checkApiKey(apiKey: string): string {
  if (typeof apiKey !== 'string' || apiKey.trim() === '' || /[\r\n]/.test(apiKey)) {
    throw new TypeError('apiKey must be a non-empty string without line breaks');
  }
  return apiKey;
}
