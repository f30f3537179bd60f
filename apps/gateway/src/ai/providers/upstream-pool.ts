import { withTraceHeaders } from '@platform/service-kit';
import type { Pool as UndiciPool } from 'undici';
import type { SseBody } from './sse-parser';
import { type ProviderErrorReading, UpstreamHttpError, UpstreamProtocolError } from './upstream-errors';

/**
 * What the pooled chat clients (openai-chat.ts, anthropic.ts) share: one
 * undici Pool per provider and key, a JSON POST to one endpoint, a non-2xx
 * answer turned into UpstreamHttpError with its body drained, and a JSON
 * answer read with its failure told apart from our own abort.
 */

/**
 * undici's Pool with its request API, without the package's index, which
 * also loads fetch, WebSocket, EventSource, the caches and the mocks (~70 of
 * its ~95 modules): ~1.8 MB less heap and ~2-3 MB less RSS per worker
 * (issue 46). The index does the same assignment of the API onto
 * Dispatcher; undici is pinned (package.json), and these are its files.
 */
const Pool = ((): typeof UndiciPool => {
  const Dispatcher = require('undici/lib/dispatcher/dispatcher') as { prototype: object };
  Object.assign(Dispatcher.prototype, require('undici/lib/api'));
  return require('undici/lib/dispatcher/pool') as typeof UndiciPool;
})();

/** Only a backstop: the fallback's timer (AI_UPSTREAM_TIMEOUT_MS) and the stream idle timer act first. */
const BACKSTOP_MS = 10 * 60_000;
/** Error bodies are read up to this size (then dropped) so the connection can be reused. */
const MAX_ERROR_BODY = 64 * 1024;
/** Only this much of an error body is kept for `readError`; the rest is drained unread. */
const MAX_ERROR_TEXT = 16 * 1024;

/** A 2xx answer's body: undici's Readable. */
export type UpstreamBody = AsyncIterable<Buffer> & SseBody & { json(): Promise<unknown> };

export type UpstreamPool = {
  /** POSTs `body` as JSON; the body of a 2xx answer, or throws UpstreamHttpError. */
  post(headers: Record<string, string>, body: object, signal: AbortSignal): Promise<UpstreamBody>;
  close(): Promise<void>;
};

/** Reads a 4xx error body's text for a verdict (see readProviderError); without it the body is only drained. */
type ErrorReader = (text: string) => ProviderErrorReading;

async function drainError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: UpstreamBody,
  readError: ErrorReader | undefined,
) {
  let size = 0;
  const kept: Buffer[] = [];
  let keptSize = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (readError && keptSize < MAX_ERROR_TEXT) {
        kept.push(chunk);
        keptSize += chunk.length;
      }
      if (size > MAX_ERROR_BODY) {
        body.destroy();
        break;
      }
    }
  } catch {
    // The status is what matters; a broken error body is read as far as it came.
  }
  const retryAfter = headers['retry-after'];
  // Only 4xx bodies change the decision (context length, content policy); the text is never logged.
  const reading =
    readError && status >= 400 && status < 500 && keptSize > 0
      ? readError(Buffer.concat(kept).toString('utf8', 0, MAX_ERROR_TEXT))
      : null;
  return new UpstreamHttpError(status, typeof retryAfter === 'string' ? retryAfter : null, reading);
}

/** A pool for `POST {baseUrl}/{endpoint}` (keep-alive connections, no per-origin limit). */
export function createUpstreamPool(baseUrl: string, endpoint: string, readError?: ErrorReader): UpstreamPool {
  const url = new URL(baseUrl);
  const path = `${url.pathname.replace(/\/+$/, '')}/${endpoint}`;
  const pool = new Pool(url.origin, {
    connections: null,
    keepAliveTimeout: 30_000,
    headersTimeout: BACKSTOP_MS,
    bodyTimeout: BACKSTOP_MS,
  });
  return {
    async post(headers, body, signal) {
      const res = await pool.request({
        path,
        method: 'POST',
        headers: withTraceHeaders(headers),
        body: JSON.stringify(body),
        signal,
      });
      const resBody = res.body as unknown as UpstreamBody;
      if (res.statusCode < 200 || res.statusCode > 299)
        throw await drainError(res.statusCode, res.headers, resBody, readError);
      return resBody;
    },
    close: () => pool.close(),
  };
}

/** A 2xx answer's JSON; an unreadable one is UpstreamProtocolError(`unreadable`), unless our own signal cut it. */
export async function readJson(
  body: UpstreamBody,
  signal: AbortSignal,
  unreadable: string,
): Promise<unknown> {
  try {
    return await body.json();
  } catch (err) {
    if (signal.aborted) throw err;
    throw new UpstreamProtocolError(unreadable);
  }
}
