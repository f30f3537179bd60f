import { type ChatUsage, STREAM_EVENTS } from '@platform/contract';
import { ERROR_CODES } from '@platform/errors';
import type { Response } from 'express';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { logUpstream } from './accounting';
import { toChatUsage, upstreamChatParams } from './chat';
import type { PreparedChat } from './chat-request';
import type { ChatUpstream } from './chat-upstream';
import { type FallbackResult, runWithFallback } from './fallback';
import type { AiRuntime, StoredKeys } from './runtime';
import { openSse } from './sse';

type StreamState = {
  /** Content received but not yet sent to the client. */
  pending: string[];
  finishReason: string | null;
  usage: ChatUsage | null;
  ended: boolean;
};

type StartedStream = { iterator: AsyncIterator<ChatCompletionChunk>; state: StreamState };

/** How a stream ended, for usage records: the status the caller effectively got. */
export type StreamOutcome = {
  status: number;
  usage: ChatUsage | null;
  result: FallbackResult<unknown>;
};

function absorb(chunk: ChatCompletionChunk, state: StreamState): void {
  for (const choice of chunk.choices) {
    const content = choice.delta?.content;
    if (content) state.pending.push(content);
    if (choice.finish_reason) state.finishReason = choice.finish_reason;
  }
  if (chunk.usage) state.usage = toChatUsage(chunk.usage);
}

/**
 * Opens the upstream stream and reads until the first piece of content (or
 * the end). Until then nothing has been sent to the client, so any failure
 * here still falls back to the next target.
 */
async function startStream(
  client: ChatUpstream,
  prepared: PreparedChat,
  model: PreparedChat['targets'][number],
  signal: AbortSignal,
): Promise<StartedStream> {
  const iterator = await client.stream(
    { ...upstreamChatParams(prepared.request, model), stream: true, stream_options: { include_usage: true } },
    signal,
  );
  const state: StreamState = { pending: [], finishReason: null, usage: null, ended: false };
  while (state.pending.length === 0) {
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
 * POST /api/v1/ai/chat/stream after validation. Errors before the first chunk
 * propagate (JSON error, fallback already tried); after it, the stream ends
 * with an `error` event instead. Every stream ends with `done` or `error`,
 * except when the client itself went away.
 */
export async function streamChat(
  rt: AiRuntime,
  prepared: PreparedChat,
  storedKeys: StoredKeys,
  res: Response,
  opts: { clientSignal: AbortSignal; requestId: string },
): Promise<StreamOutcome> {
  const result = await runWithFallback({
    endpoint: 'stream',
    targets: prepared.targets,
    resolveCredential: (t) => rt.providers.credential(t.provider, storedKeys[t.provider]),
    clientSignal: opts.clientSignal,
    timeoutMs: rt.upstreamTimeoutMs,
    logger: rt.logger,
    metrics: rt.metrics,
    attempt: ({ target, credential, signal }) =>
      startStream(rt.providers.chat(credential), prepared, target, signal),
  });
  logUpstream(res, result);
  const { iterator, state } = result.value;
  const sse = openSse(res, { keepAliveMs: rt.keepAliveMs });
  let idleTimedOut = false;
  let failed = false;
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
    for (const content of state.pending.splice(0)) await sse.send(STREAM_EVENTS.chunk, { content });
    while (!state.ended) {
      awaitingUpstream = true;
      idleTimer.refresh();
      const next = await iterator.next();
      awaitingUpstream = false;
      if (next.done) break;
      absorb(next.value, state);
      for (const content of state.pending.splice(0)) await sse.send(STREAM_EVENTS.chunk, { content });
    }
  } catch (err) {
    failed = true;
    // Only the error's class: provider messages can quote the key or the prompt.
    const error = err instanceof Error ? err.constructor.name : typeof err;
    rt.logger.warn({ error, provider: result.target.provider }, 'upstream stream failed after start');
  } finally {
    clearTimeout(idleTimer);
  }

  if (opts.clientSignal.aborted) {
    sse.end();
    return { status: 499, usage: state.usage, result };
  }
  // A stream that stops without a finish reason was cut off, not finished.
  const errorCode = idleTimedOut
    ? 'upstream_timeout'
    : failed || !state.finishReason
      ? 'upstream_error'
      : null;
  if (errorCode) {
    if (!failed && !idleTimedOut)
      rt.logger.warn({ provider: result.target.provider }, 'upstream stream ended early');
    await sse.send(STREAM_EVENTS.error, { error: ERROR_CODES[errorCode].error, request_id: opts.requestId });
    sse.end();
    return { status: ERROR_CODES[errorCode].status, usage: state.usage, result };
  }
  const usage = state.usage ?? toChatUsage(null);
  await sse.send(STREAM_EVENTS.done, {
    model_used: result.target.model,
    finish_reason: state.finishReason ?? 'stop',
    usage,
  });
  sse.end();
  return { status: 200, usage, result };
}
