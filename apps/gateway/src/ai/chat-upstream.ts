import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { Pool } from 'undici';
import { UpstreamHttpError, UpstreamProtocolError } from './upstream-errors';

/**
 * The chat hot path's client of an OpenAI-compatible provider: one undici
 * Pool (keep-alive connections, no per-origin limit) per provider and key,
 * handed out by the ProviderRegistry like the SDK clients.
 *
 * Why not the `openai` SDK here: a CPU profile of the gateway under load
 * (bench `peers`) showed the SDK plus the fetch/WHATWG-streams machinery
 * under it at about a fifth of the process's CPU per chat request (Headers,
 * Request, AbortSignal wrapping, web streams, SSE decoding through
 * TextDecoder and async generators). This client sends the same request
 * (POST {baseURL}/chat/completions, Bearer key, JSON body) over the pool and
 * maps failures to the errors the fallback already classifies: a non-2xx
 * answer is UpstreamHttpError (status + Retry-After), an unreadable body
 * UpstreamProtocolError, a socket problem undici's own errors (connection
 * errors). Timeouts and client disconnects stay the caller's AbortSignal,
 * which aborts the request and closes its socket. The SDK stays the client
 * for images and speech.
 */
export type ChatUpstream = {
  complete(params: object, signal: AbortSignal): Promise<ChatCompletion>;
  /** Resolves once the provider answered 2xx; iterates the stream's chunks until `[DONE]`. */
  stream(params: object, signal: AbortSignal): Promise<AsyncIterableIterator<ChatCompletionChunk>>;
  close(): Promise<void>;
};

/** Only a backstop: the fallback's timer (AI_UPSTREAM_TIMEOUT_MS) and the stream idle timer act first. */
const BACKSTOP_MS = 10 * 60_000;
/** Error bodies are read (and dropped) up to this size so the connection can be reused. */
const MAX_ERROR_BODY = 64 * 1024;

type Body = AsyncIterable<Buffer> & {
  text(): Promise<string>;
  json(): Promise<unknown>;
  setEncoding(encoding: 'utf8'): void;
  destroy(err?: Error): void;
};

async function drainError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: Body,
) {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > MAX_ERROR_BODY) {
        body.destroy();
        break;
      }
    }
  } catch {
    // The status is what matters; a broken error body changes nothing.
  }
  const retryAfter = headers['retry-after'];
  return new UpstreamHttpError(status, typeof retryAfter === 'string' ? retryAfter : null);
}

type Parsed = ChatCompletionChunk & { error?: unknown };

/**
 * Server-sent events of an OpenAI-style stream: `data: {json}` lines, ending
 * with `data: [DONE]`. After [DONE] the rest of the body is read to its end so
 * the connection goes back to the pool.
 *
 * Driven by the body's 'data' events into a small queue rather than an async
 * generator over `for await` of the body: at thousands of concurrent streams
 * the Readable async iterator plus the generator cost several promises and
 * closures per chunk (bench `streams` profile); this costs one resolved
 * promise per chunk. The body is paused while more than QUEUE_HIGH chunks
 * wait, so a slow reader still pushes back on the upstream socket.
 */
class SseChunkIterator implements AsyncIterableIterator<ChatCompletionChunk> {
  private static readonly QUEUE_HIGH = 64;
  private readonly queue: ChatCompletionChunk[] = [];
  private rest = '';
  private done = false;
  private ended = false;
  private failure: Error | null = null;
  private waiter: {
    resolve: (r: IteratorResult<ChatCompletionChunk>) => void;
    reject: (e: Error) => void;
  } | null = null;

  constructor(private readonly body: Body & NodeJS.EventEmitter & { pause(): void; resume(): void }) {
    body.setEncoding('utf8');
    body.on('data', (piece: string) => this.onData(piece));
    body.on('end', () => this.finish(null));
    body.on('error', (err: Error) => this.finish(err));
  }

  private onData(piece: string): void {
    if (this.done || this.failure) return;
    const text = this.rest + piece;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const lineStart = start;
      start = nl + 1;
      if (!text.startsWith('data:', lineStart)) continue;
      const data = text.slice(text.charCodeAt(lineStart + 5) === 32 ? lineStart + 6 : lineStart + 5, end);
      if (data === '[DONE]') {
        this.done = true;
        this.rest = '';
        this.wake();
        return;
      }
      let parsed: Parsed;
      try {
        parsed = JSON.parse(data) as Parsed;
      } catch {
        this.fail(new UpstreamProtocolError('unreadable stream event'));
        return;
      }
      // An error event in the middle of a stream (the SDK throws an APIError for these).
      if (parsed.error !== undefined) {
        this.fail(new UpstreamProtocolError('error event in stream'));
        return;
      }
      this.queue.push(parsed);
    }
    this.rest = text.slice(start);
    if (this.queue.length > SseChunkIterator.QUEUE_HIGH) this.body.pause();
    this.wake();
  }

  /** Chunks already queued are still delivered; the failure comes after them. */
  private fail(err: Error): void {
    this.failure = err;
    this.rest = '';
    // As the async generator did when it threw: the connection is not reused.
    this.body.destroy();
    this.wake();
  }

  private finish(err: Error | null): void {
    this.ended = true;
    if (err && !this.done && !this.failure) this.failure = err;
    this.wake();
  }

  private take(): IteratorResult<ChatCompletionChunk> | Error | null {
    const value = this.queue.shift();
    if (value !== undefined) {
      if (this.queue.length === 0) this.body.resume();
      return { done: false, value };
    }
    if (this.failure) return this.failure;
    if (this.done || this.ended) return { done: true, value: undefined };
    return null;
  }

  private wake(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    const next = this.take();
    if (next === null) return;
    this.waiter = null;
    if (next instanceof Error) waiter.reject(next);
    else waiter.resolve(next);
  }

  next(): Promise<IteratorResult<ChatCompletionChunk>> {
    const next = this.take();
    if (next instanceof Error) return Promise.reject(next);
    if (next !== null) return Promise.resolve(next);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<ChatCompletionChunk>> {
    if (!this.ended) this.body.destroy();
    this.done = true;
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ChatCompletionChunk> {
    return this;
  }
}

export function createChatUpstream(baseUrl: string, apiKey: string): ChatUpstream {
  const url = new URL(baseUrl);
  const path = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  const pool = new Pool(url.origin, {
    connections: null,
    keepAliveTimeout: 30_000,
    headersTimeout: BACKSTOP_MS,
    bodyTimeout: BACKSTOP_MS,
  });
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  const streamHeaders = { ...headers, accept: 'text/event-stream' };

  const send = async (params: object, signal: AbortSignal, stream: boolean) => {
    const res = await pool.request({
      path,
      method: 'POST',
      headers: stream ? streamHeaders : headers,
      body: JSON.stringify(params),
      signal,
    });
    const body = res.body as unknown as Body;
    if (res.statusCode < 200 || res.statusCode > 299)
      throw await drainError(res.statusCode, res.headers, body);
    return body;
  };

  return {
    async complete(params, signal) {
      const body = await send(params, signal, false);
      let value: unknown;
      try {
        value = await body.json();
      } catch (err) {
        if (signal.aborted) throw err;
        throw new UpstreamProtocolError('unreadable completion');
      }
      if (typeof value !== 'object' || value === null || !Array.isArray((value as ChatCompletion).choices))
        throw new UpstreamProtocolError('not a chat completion');
      return value as ChatCompletion;
    },
    async stream(params, signal) {
      return new SseChunkIterator(
        (await send(params, signal, true)) as ConstructorParameters<typeof SseChunkIterator>[0],
      );
    },
    close: () => pool.close(),
  };
}
