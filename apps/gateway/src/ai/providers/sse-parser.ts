import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { UpstreamProtocolError } from './upstream-errors';

/** What the parser needs of a response body: a Readable's events and flow control. */
export type SseBody = NodeJS.EventEmitter & {
  setEncoding(encoding: 'utf8'): void;
  pause(): void;
  resume(): void;
  destroy(err?: Error): void;
};

type Parsed = ChatCompletionChunk & { error?: unknown };

/**
 * The line framing of server-sent events, shared by the OpenAI-style parser
 * below and the Anthropic client (anthropic.ts): pieces of the body go in
 * (`push`), the values of its complete `data:` lines come out (`next`), one
 * space after the colon dropped. Lines end in LF or CRLF; every other line
 * (`event:`, `id:`, comments, blank ones) is passed over; a line cut between
 * pieces waits for its end. Linear: indexOf and slices, no regular expression.
 */
export class SseDataLines {
  private text = '';
  /** Where the first line not yet read starts in `text`. */
  private start = 0;

  push(piece: string): void {
    this.text = this.start < this.text.length ? this.text.slice(this.start) + piece : piece;
    this.start = 0;
  }

  /** The next complete `data:` line's value, or null until more is pushed. */
  next(): string | null {
    const text = this.text;
    for (let nl = text.indexOf('\n', this.start); nl !== -1; nl = text.indexOf('\n', this.start)) {
      const lineStart = this.start;
      const end = nl > lineStart && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      this.start = nl + 1;
      if (text.startsWith('data:', lineStart))
        return text.slice(text.charCodeAt(lineStart + 5) === 32 ? lineStart + 6 : lineStart + 5, end);
    }
    // Every line read: the piece is not held while the stream waits for the next one
    // (~300 bytes a stream in the bench, a whole socket read for a long event).
    if (this.start >= text.length) this.clear();
    return null;
  }

  /** Drops what is held (the stream is over). */
  clear(): void {
    this.text = '';
    this.start = 0;
  }
}

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
export class SseChunkIterator implements AsyncIterableIterator<ChatCompletionChunk> {
  private static readonly QUEUE_HIGH = 64;
  private readonly queue: ChatCompletionChunk[] = [];
  private readonly lines = new SseDataLines();
  private done = false;
  private ended = false;
  private failure: Error | null = null;
  /** Unparseable events in a row; one is skipped, the second ends the stream. */
  private garbledInRow = 0;
  /** A chunk carried a finish reason: the answer is whole even if `[DONE]` never comes. */
  private finished = false;
  private waiter: {
    resolve: (r: IteratorResult<ChatCompletionChunk>) => void;
    reject: (e: Error) => void;
  } | null = null;

  constructor(
    private readonly body: SseBody,
    /** Told of every unparseable event (to count and log it). */
    private readonly onGarbled?: () => void,
  ) {
    body.setEncoding('utf8');
    body.on('data', (piece: string) => this.onData(piece));
    body.on('end', () => this.finish(null));
    body.on('error', (err: Error) => this.finish(err));
  }

  private onData(piece: string): void {
    if (this.done || this.failure) return;
    const lines = this.lines;
    lines.push(piece);
    for (let data = lines.next(); data !== null; data = lines.next()) {
      if (data === '[DONE]') {
        this.done = true;
        lines.clear();
        this.wake();
        return;
      }
      let parsed: Parsed;
      try {
        parsed = JSON.parse(data) as Parsed;
      } catch {
        // Proxies and CDNs mangle an event now and then: one is skipped (and
        // counted); two in a row mean the stream itself is broken.
        this.garbledInRow += 1;
        this.onGarbled?.();
        if (this.garbledInRow >= 2) {
          this.fail(new UpstreamProtocolError('unreadable stream events', 'garbled'));
          return;
        }
        continue;
      }
      this.garbledInRow = 0;
      if (!this.finished && parsed.choices?.some((c) => c.finish_reason)) this.finished = true;
      // An error event in the middle of a stream (the SDK throws an APIError for these).
      if (parsed.error !== undefined) {
        this.fail(new UpstreamProtocolError('error event in stream', 'error_event'));
        return;
      }
      this.queue.push(parsed);
    }
    if (this.queue.length > SseChunkIterator.QUEUE_HIGH) this.body.pause();
    this.wake();
  }

  /** Chunks already queued are still delivered; the failure comes after them. */
  private fail(err: Error): void {
    this.failure = err;
    this.lines.clear();
    // As the async generator did when it threw: the connection is not reused.
    this.body.destroy();
    this.wake();
  }

  /**
   * The body ended. Without `[DONE]` and without a finish reason the answer
   * was cut, whether undici saw an error or not: a response sent with
   * `Connection: close` ends its body at the socket's end as if complete
   * (undici treats all data so far as the message), so a provider or proxy
   * that closes mid-stream must not pass for a finished answer.
   */
  private finish(err: Error | null): void {
    this.ended = true;
    if (!this.done && !this.failure) {
      if (err) this.failure = err;
      else if (!this.finished) this.failure = new UpstreamProtocolError('stream ended before its end', 'cut');
    }
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
