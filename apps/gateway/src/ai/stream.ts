import { type ChatUsage, STREAM_EVENTS } from '@platform/contract';
import { ERROR_CODES } from '@platform/errors';
import { DRAIN_DEADLINE_EVENT } from '@platform/service-kit';
import type { Response } from 'express';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { CLIENT_CLOSED_STATUS, logUpstream } from './accounting';
import { toChatUsage, upstreamChatParams } from './chat';
import type { PreparedChat } from './chat-request';
import type { ChatUpstream } from './chat-upstream';
import type { Target } from './lanes';
import { runTargets } from './run-targets';
import type { AiRuntime, StoredKeys } from './runtime';
import { openSse, type SseWriter } from './sse';

type StreamState = {
  /** Chunks received but not yet sent to the client. */
  pending: ChatCompletionChunk[];
  /** True once a chunk carried output (content or a tool call): from then on no fallback. */
  started: boolean;
  finishReason: string | null;
  usage: ChatUsage | null;
  ended: boolean;
};

type StartedStream = { iterator: AsyncIterator<ChatCompletionChunk>; state: StreamState };

/** How a stream ended, for usage records: the status the caller effectively got, the target that answered. */
export type StreamOutcome = {
  status: number;
  target: Target;
  usage: ChatUsage | null;
};

/** The error a started stream ends with; `service_unavailable` when the server shuts down under it. */
export type StreamErrorCode = 'upstream_timeout' | 'upstream_error' | 'service_unavailable';

/**
 * How one API writes a started stream. The relay (fallback, idle timeout,
 * backpressure, outcome) is shared; only the wire format differs.
 */
export type StreamFormat = {
  /**
   * One upstream chunk, in order; chunks before the first output arrive together once it does.
   * Returns a promise only when the client's socket needs draining first (see SseWriter).
   */
  chunk(sse: SseWriter, chunk: ChatCompletionChunk, target: Target): Promise<void> | undefined;
  /** The stream finished normally. */
  done(sse: SseWriter, end: { target: Target; finishReason: string; usage: ChatUsage }): Promise<void>;
  /** The provider failed after the stream started; this is the last thing sent. */
  error(sse: SseWriter, code: StreamErrorCode): Promise<void>;
};

function noteChunk(chunk: ChatCompletionChunk, state: StreamState): void {
  for (const choice of chunk.choices) {
    if (choice.delta?.content || (choice.delta?.tool_calls?.length ?? 0) > 0) state.started = true;
    if (choice.finish_reason) state.finishReason = choice.finish_reason;
  }
  if (chunk.usage) state.usage = toChatUsage(chunk.usage);
}

function absorb(chunk: ChatCompletionChunk, state: StreamState): void {
  noteChunk(chunk, state);
  state.pending.push(chunk);
}

/**
 * Opens the upstream stream and reads until the first output (or the end).
 * Until then nothing has been sent to the client, so any failure here still
 * falls back to the next target.
 */
async function startStream(
  client: ChatUpstream,
  prepared: PreparedChat,
  model: Target,
  signal: AbortSignal,
): Promise<StartedStream> {
  const iterator = await client.stream(
    { ...upstreamChatParams(prepared, model), stream: true, stream_options: { include_usage: true } },
    signal,
  );
  const state: StreamState = { pending: [], started: false, finishReason: null, usage: null, ended: false };
  while (!state.started) {
    const next = await iterator.next();
    if (next.done) {
      state.ended = true;
      break;
    }
    absorb(next.value, state);
  }
  // A stream that ended quietly while our signal fired still counts as a timeout/disconnect.
  if (signal.aborted) throw new Error('upstream request aborted');
  return { iterator, state };
}

/**
 * A streamed completion after validation, written in `format`. Errors before
 * the first output propagate (JSON error, fallback already tried); after it,
 * the stream ends with `format.error` instead. Every stream ends with `done`
 * or `error`, except when the client itself went away.
 */
export async function relayChatStream(
  rt: AiRuntime,
  prepared: PreparedChat,
  storedKeys: StoredKeys,
  res: Response,
  opts: { clientSignal: AbortSignal; format: StreamFormat },
): Promise<StreamOutcome> {
  const { format } = opts;
  const result = await runTargets(rt, {
    endpoint: 'stream',
    targets: prepared.targets,
    storedKeys,
    clientSignal: opts.clientSignal,
    attempt: ({ target, credential, signal }) =>
      startStream(rt.providers.chat(credential), prepared, target, signal),
  });
  logUpstream(res, result);
  const { iterator, state } = result.value;
  const target = result.target;
  const sse = openSse(res, { keepAliveMs: rt.keepAliveMs });
  let idleTimedOut = false;
  let failed = false;
  // The server's drain deadline passed (SIGTERM): stop reading and say so as the last event.
  let shuttingDown = false;
  const onDrainDeadline = () => {
    shuttingDown = true;
    result.controller.abort();
  };
  res.once(DRAIN_DEADLINE_EVENT, onDrainDeadline);
  // One idle timer per stream, re-armed per chunk with refresh(): no timer churn
  // at thousands of chunks per second. Only silence from upstream counts; time
  // spent waiting for a slow client to drain re-arms it.
  let awaitingUpstream = false;
  const idleTimer = setTimeout(() => {
    if (!awaitingUpstream) {
      idleTimer.refresh();
      return;
    }
    idleTimedOut = true;
    result.controller.abort();
  }, rt.idleTimeoutMs);
  try {
    for (const chunk of state.pending.splice(0)) await format.chunk(sse, chunk, target);
    while (!state.ended) {
      awaitingUpstream = true;
      idleTimer.refresh();
      const next = await iterator.next();
      awaitingUpstream = false;
      if (next.done) break;
      // After the start, chunks go straight out: no pending list, and an await
      // only when the client's socket pushes back.
      const chunk = next.value;
      noteChunk(chunk, state);
      const wait = format.chunk(sse, chunk, target);
      if (wait) await wait;
    }
  } catch (err) {
    failed = true;
    // Only the error's class: provider messages can quote the key or the prompt.
    const error = err instanceof Error ? err.constructor.name : typeof err;
    rt.logger.warn({ error, provider: target.provider }, 'upstream stream failed after start');
  } finally {
    clearTimeout(idleTimer);
    res.off(DRAIN_DEADLINE_EVENT, onDrainDeadline);
  }

  if (opts.clientSignal.aborted) {
    sse.end();
    return { status: CLIENT_CLOSED_STATUS, target, usage: state.usage };
  }
  // A stream that stops without a finish reason was cut off, not finished.
  const errorCode: StreamErrorCode | null = shuttingDown
    ? 'service_unavailable'
    : idleTimedOut
      ? 'upstream_timeout'
      : failed || !state.finishReason
        ? 'upstream_error'
        : null;
  if (errorCode) {
    if (!failed && !idleTimedOut && !shuttingDown)
      rt.logger.warn({ provider: target.provider }, 'upstream stream ended early');
    await format.error(sse, errorCode);
    sse.end();
    return { status: ERROR_CODES[errorCode].status, target, usage: state.usage };
  }
  const usage = state.usage ?? toChatUsage(null);
  await format.done(sse, { target, finishReason: state.finishReason ?? 'stop', usage });
  sse.end();
  return { status: 200, target, usage };
}

/** The native events of `POST /api/v1/ai/chat/stream`: `chunk`, then `done` or `error`. */
export function nativeStreamFormat(requestId: string): StreamFormat {
  return {
    chunk(sse, chunk) {
      // Writes every choice's content; if the socket pushes back, the caller waits once.
      let wait: Promise<void> | undefined;
      for (const choice of chunk.choices) {
        const content = choice.delta?.content;
        if (content) wait = sse.send(STREAM_EVENTS.chunk, { content }) ?? wait;
      }
      return wait;
    },
    async done(sse, end) {
      await sse.send(STREAM_EVENTS.done, {
        model_used: end.target.model,
        finish_reason: end.finishReason,
        usage: end.usage,
      });
    },
    async error(sse, code) {
      await sse.send(STREAM_EVENTS.error, { error: ERROR_CODES[code].error, request_id: requestId });
    },
  };
}

/** POST /api/v1/ai/chat/stream after validation, in the native event format. */
export function streamChat(
  rt: AiRuntime,
  prepared: PreparedChat,
  storedKeys: StoredKeys,
  res: Response,
  opts: { clientSignal: AbortSignal; requestId: string },
): Promise<StreamOutcome> {
  return relayChatStream(rt, prepared, storedKeys, res, {
    clientSignal: opts.clientSignal,
    format: nativeStreamFormat(opts.requestId),
  });
}
