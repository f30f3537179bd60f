import {
  STREAM_EVENTS,
  type StreamChunkEvent,
  type StreamDoneEvent,
  type StreamErrorEvent,
  ZStreamChunkEvent,
  ZStreamDoneEvent,
  ZStreamErrorEvent,
} from '@platform/contract';
import { NetworkError, ResponseValidationError } from './errors';
import type { ResponseSchema } from './responses';
import { type SseEvent, SseParser } from './sse';
import { type AttemptContext, type CallOptions, executeCall, type Transport } from './transport';

/** One event of `POST /api/v1/ai/chat/stream`; `done` and `error` are always the last. */
export type ChatStreamEvent =
  | { type: 'chunk'; data: StreamChunkEvent }
  | { type: 'done'; data: StreamDoneEvent }
  | { type: 'error'; data: StreamErrorEvent };

/** Async iterator of the stream's events; `return()` (or `break` in `for await`) closes the connection. */
export type ChatStream = AsyncGenerator<ChatStreamEvent, void, undefined>;

const SCHEMAS: Record<ChatStreamEvent['type'], ResponseSchema<unknown>> = {
  [STREAM_EVENTS.chunk]: ZStreamChunkEvent,
  [STREAM_EVENTS.done]: ZStreamDoneEvent,
  [STREAM_EVENTS.error]: ZStreamErrorEvent,
};

type Opened = { body: ReadableStream<Uint8Array>; context: AttemptContext };

/**
 * Opens the stream lazily, on the first `next()`. The request is retried by the
 * normal policy until a 200 arrives; once events flow nothing is retried,
 * because a second stream would repeat text the caller has already seen.
 */
export async function* streamChat(transport: Transport, body: unknown, call: CallOptions): ChatStream {
  const local = new AbortController();
  const signal = call.signal ? AbortSignal.any([call.signal, local.signal]) : local.signal;
  try {
    const { body: stream, context } = await executeCall<Opened>(
      transport,
      {
        method: 'POST',
        path: '/api/v1/ai/chat/stream',
        body,
        headers: { accept: 'text/event-stream' },
        retryable: true,
      },
      { ...call, signal },
      async (response, ctx) => {
        const type = response.headers.get('content-type') ?? '';
        if (!type.startsWith('text/event-stream') || response.body === null) {
          await response.body?.cancel();
          throw invalid(ctx, `expected text/event-stream, got ${type || 'no content type'}`);
        }
        return { body: response.body, context: ctx };
      },
    );
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (call.signal?.aborted) throw call.signal.reason;
        throw broken(context, 'stream broke off', err);
      }
      if (chunk.done) break;
      for (const raw of parser.push(decoder.decode(chunk.value, { stream: true }))) {
        const event = toChatEvent(raw, context);
        if (event === undefined) continue;
        yield event;
        if (event.type !== 'chunk') return;
      }
    }
    throw broken(context, 'stream ended before its done event');
  } finally {
    // Runs on return(), break, errors and normal completion alike; closing an already finished body is a no-op.
    local.abort();
  }
}

/** Unknown event names are skipped, so the gateway can add events without breaking older clients. */
function toChatEvent(raw: SseEvent, context: AttemptContext): ChatStreamEvent | undefined {
  if (!Object.hasOwn(SCHEMAS, raw.event)) return undefined;
  const type = raw.event as ChatStreamEvent['type'];
  let value: unknown;
  try {
    value = JSON.parse(raw.data);
  } catch {
    throw invalid(context, `${type} event data is not JSON`);
  }
  const result = SCHEMAS[type].safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw invalid(
      context,
      `${type} event: ${issue ? `${issue.path.map(String).join('.')} ${issue.message}` : 'invalid'}`,
    );
  }
  return { type, data: result.data } as ChatStreamEvent;
}

function invalid(context: AttemptContext, message: string): ResponseValidationError {
  return new ResponseValidationError({
    status: 200,
    issues: [{ path: '(root)', message }],
    requestId: context.requestId,
    attempts: context.attempts,
    history: [
      ...context.history,
      { attempt: context.attempts, requestId: context.requestId, status: 200, error: message },
    ],
  });
}

function broken(context: AttemptContext, message: string, cause?: unknown): NetworkError {
  return new NetworkError(message, {
    requestId: context.requestId,
    attempts: context.attempts,
    history: [
      ...context.history,
      { attempt: context.attempts, requestId: context.requestId, status: 200, error: message },
    ],
    cause,
  });
}
