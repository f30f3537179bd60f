import { type ChatUsage, STREAM_EVENTS } from '@platform/contract';
import { ERROR_CODES, isAppError } from '@platform/errors';
import { addAccessLogFields } from '@platform/logging';
import { DRAIN_DEADLINE_EVENT } from '@platform/service-kit';
import type { Response } from 'express';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { estimateChatPrompt, estimateTokens } from '../../usage/estimate';
import { type AccountedCall, CLIENT_CLOSED_STATUS, logUpstream } from '../accounting';
import { type CacheTokens, cacheTokensOf, toChatUsage, upstreamChatParams } from '../chat';
import type { PreparedChat } from '../chat-request';
import type { Target } from '../config/lanes';
import { ClientGoneError, FallbackExhaustedError } from '../fallback';
import { announceDroppedParams } from '../field-policy';
import type { ChatUpstream } from '../providers/openai-chat';
import { UpstreamProtocolError } from '../providers/upstream-errors';
import { capCompletion, completionAllowanceOf } from '../reserve';
import { runTargets } from '../run-targets';
import type { AiRuntime, StoredKeys } from '../runtime';
import { openSse, type SseWriter } from './sse-writer';

type StreamState = {
  /** Chunks received but not yet sent to the client. */
  pending: ChatCompletionChunk[];
  /** True once a chunk carried output (content or a tool call): from then on no fallback. */
  started: boolean;
  finishReason: string | null;
  usage: ChatUsage | null;
  cache: CacheTokens | null;
  ended: boolean;
  /** A tool call was streamed: such an answer cannot be continued elsewhere. */
  toolCalls: boolean;
  /** A choice other than index 0 was streamed (n > 1): not continued either. */
  manyChoices: boolean;
  /** What the client was sent (content and tool-call text), for an estimate when the provider reports no usage. */
  delivered: string[];
};

type StartedStream = { iterator: AsyncIterator<ChatCompletionChunk>; state: StreamState };

/**
 * One target's part of a streamed answer. A stream continued after a cut has
 * several; the answer's usage is the sum of what each target charged. A
 * segment the provider reported no usage for (usually a cut one) carries our
 * tokenizer's estimate of its prompt (with the prefill it was given) and of
 * what it delivered, marked `estimated`.
 */
export type StreamSegment = {
  target: Target;
  /** Reported or estimated; null when the segment delivered nothing and reported nothing. */
  usage: ChatUsage | null;
  /** Prompt-cache counts the provider reported for this segment. */
  cache: CacheTokens | null;
  estimated: boolean;
  /** The segment ended the answer (finish reason received). */
  completed: boolean;
  /** Characters of content this segment sent to the client. */
  contentChars: number;
};

/** A relayed stream for the frame: its outcome, and its final event once the record is kept. */
export type StreamAnswer = { outcome: StreamOutcome; last(recorded: boolean): Promise<void> | void };

/** How a stream ended, for usage records: the status the caller effectively got, the target that answered. */
export type StreamOutcome = {
  status: number;
  /** The target that sent the last part of the answer. */
  target: Target;
  /** The sum of the segments' usage (reported or estimated); null when there is none. */
  usage: ChatUsage | null;
  /** Prompt-cache counts summed over the segments; null when no provider reported any. */
  cache: CacheTokens | null;
  /** Some of the usage is our tokenizer's estimate: a segment ended before the provider reported any. */
  estimated: boolean;
  /** Every target that sent part of the answer, in order. */
  segments: StreamSegment[];
};

/**
 * The error a started stream ends with; `service_unavailable` when the server
 * shuts down under it, `rate_limited` when a budget cannot hold its continuation.
 */
export type StreamErrorCode = 'upstream_timeout' | 'upstream_error' | 'service_unavailable' | 'rate_limited';

/**
 * How one API writes a started stream. The relay (fallback, idle timeout,
 * backpressure, continuation, outcome) is shared; only the wire format differs.
 */
export type StreamFormat = {
  /**
   * One upstream chunk, in order; chunks before the first output arrive together once it does.
   * Returns a promise only when the client's socket needs draining first (see SseWriter).
   */
  chunk(sse: SseWriter, chunk: ChatCompletionChunk, target: Target): Promise<void> | undefined;
  /** The stream finished normally. */
  done(
    sse: SseWriter,
    end: { target: Target; finishReason: string; usage: ChatUsage; cache: CacheTokens | null },
  ): Promise<void>;
  /** The provider failed after the stream started; this is the last thing sent. */
  error(sse: SseWriter, code: StreamErrorCode): Promise<void>;
};

function noteChunk(chunk: ChatCompletionChunk, state: StreamState): void {
  for (const choice of chunk.choices) {
    if (choice.index !== 0) state.manyChoices = true;
    // Reasoning text (`reasoning`, as OpenRouter and the Anthropic client name
    // it) counts as output: a model that thinks for minutes has started
    // answering, and must not hit the attempt timeout nor be retried elsewhere.
    const delta = choice.delta as (typeof choice.delta & { reasoning?: unknown }) | undefined;
    for (const text of [delta?.content, delta?.reasoning]) {
      if (typeof text === 'string' && text) {
        state.started = true;
        state.delivered.push(text);
      }
    }
    for (const call of delta?.tool_calls ?? []) {
      state.started = true;
      state.toolCalls = true;
      if (call.function?.name) state.delivered.push(call.function.name);
      if (call.function?.arguments) state.delivered.push(call.function.arguments);
    }
    if (choice.finish_reason) state.finishReason = choice.finish_reason;
  }
  if (chunk.usage) {
    state.usage = toChatUsage(chunk.usage);
    state.cache = cacheTokensOf(chunk.usage);
  }
}

function absorb(chunk: ChatCompletionChunk, state: StreamState): void {
  noteChunk(chunk, state);
  state.pending.push(chunk);
}

/** The continuation's chunks carry no second `role` delta: the caller sees one answer. */
function withoutRole(chunk: ChatCompletionChunk): ChatCompletionChunk {
  for (const choice of chunk.choices) {
    if (choice.delta?.role !== undefined) delete choice.delta.role;
  }
  return chunk;
}

/** Content of choice 0 in a chunk ('' when none). */
function contentOf(chunk: ChatCompletionChunk): string {
  const first = chunk.choices[0];
  return first?.index === 0 && typeof first.delta?.content === 'string' ? first.delta.content : '';
}

function addUsage(a: ChatUsage | null, b: ChatUsage | null): ChatUsage | null {
  if (!a) return b;
  if (!b) return a;
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

/**
 * Opens the upstream stream and reads until the first output (or the end).
 * Until then nothing has been sent to the client, so any failure here still
 * falls back to the next target. `prefill` (a continuation) is the answer so
 * far, sent as a trailing assistant message for the target to go on from.
 */
async function startStream(
  client: ChatUpstream,
  prepared: PreparedChat,
  model: Target,
  signal: AbortSignal,
  prefill: string,
  onGarbled: () => void,
): Promise<StartedStream> {
  const params = upstreamChatParams(prepared, model);
  const messages = prefill
    ? [...params.messages, { role: 'assistant' as const, content: prefill }]
    : params.messages;
  const iterator = await client.stream(
    { ...params, messages, stream: true, stream_options: { include_usage: true } },
    signal,
    onGarbled,
    prepared.native,
  );
  const state: StreamState = {
    pending: [],
    started: false,
    finishReason: null,
    usage: null,
    cache: null,
    ended: false,
    toolCalls: false,
    manyChoices: false,
    delivered: [],
  };
  while (!state.started) {
    const next = await iterator.next();
    if (next.done) {
      state.ended = true;
      break;
    }
    absorb(prefill ? withoutRole(next.value) : next.value, state);
  }
  // A stream that ended quietly while our signal fired still counts as a timeout/disconnect.
  if (signal.aborted) throw new Error('upstream request aborted');
  return { iterator, state };
}

/** Why a started segment stopped short of its finish reason. */
type CutReason = 'cut' | 'stall' | 'garbled' | 'error_event';

/**
 * Whether a target may finish an answer another one started: its lanes config
 * `accepts_prefill`, else its provider's (the catalogue's `prefill`).
 */
export function acceptsPrefill(rt: Pick<AiRuntime, 'catalog'>, target: Target): boolean {
  return target.accepts_prefill ?? rt.catalog.get(target.provider)?.prefill ?? false;
}

/**
 * A streamed completion after validation, written in `format`. Errors before
 * the first output propagate (JSON error, fallback already tried). After it,
 * a stream that is cut, stalls past the lane's idle limit or sends two
 * unparseable events in a row goes on at the next target that accepts
 * prefill, with the answer so far as an assistant prefill; only the
 * continuation is relayed, so the caller sees one answer. Without such a
 * target (or for an answer with tool calls or several choices) the stream
 * ends with `format.error`. Every stream ends with `done` or `error`, except
 * when the client itself went away.
 */
export async function relayChatStream(
  rt: AiRuntime,
  prepared: PreparedChat,
  storedKeys: StoredKeys,
  res: Response,
  opts: {
    clientSignal: AbortSignal;
    format: StreamFormat;
    /** Reserves a continuation's prompt and allowance (AccountedCall.reserveMore). */
    reserveMore: AccountedCall['reserveMore'];
  },
): Promise<StreamAnswer> {
  const { format } = opts;
  const lane = rt.config.lanes[prepared.lane];
  const idleTimeoutMs = lane?.stream_idle_timeout_ms ?? rt.idleTimeoutMs;
  let current: Target = prepared.targets[0] as Target;
  const onGarbled = () => {
    rt.metrics.garbledEvent(current.provider);
    rt.logger.warn(
      { provider: current.provider, model: current.model },
      'upstream stream event unreadable, skipped',
    );
  };
  const start = (targets: readonly Target[], prefill: string) =>
    runTargets(rt, {
      endpoint: 'stream',
      targets,
      storedKeys,
      clientSignal: opts.clientSignal,
      lane: prepared.lane,
      stream: true,
      attempt: ({ target, credential, signal }) => {
        current = target;
        return startStream(rt.providers.chat(credential), prepared, target, signal, prefill, onGarbled);
      },
    });
  let result = await start(prepared.targets, '');
  logUpstream(res, result);
  announceDroppedParams(rt, res, prepared, result.target);
  // Targets still untried after the one answering, in the order of the lane.
  let rest = prepared.targets.slice(result.index + 1);
  const sse = openSse(res, { keepAliveMs: rt.keepAliveMs });
  const segments: StreamSegment[] = [];
  /** The answer's text the client got so far (choice 0), the prefill of a continuation. */
  let sent = '';
  let idleTimedOut = false;
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
  }, idleTimeoutMs);
  let errorCode: StreamErrorCode | null = null;
  let state: StreamState = result.value.state;
  try {
    for (;;) {
      const { iterator } = result.value;
      state = result.value.state;
      const target = result.target;
      let cut: CutReason | null = null;
      const before = sent.length;
      idleTimedOut = false;
      try {
        for (const chunk of state.pending.splice(0)) {
          sent += contentOf(chunk);
          await format.chunk(sse, chunk, target);
        }
        while (!state.ended) {
          awaitingUpstream = true;
          idleTimer.refresh();
          const next = await iterator.next();
          awaitingUpstream = false;
          if (next.done) break;
          // After the start, chunks go straight out: no pending list, and an await
          // only when the client's socket pushes back.
          const chunk = segments.length > 0 ? withoutRole(next.value) : next.value;
          noteChunk(chunk, state);
          sent += contentOf(chunk);
          const wait = format.chunk(sse, chunk, target);
          if (wait) await wait;
        }
        // A stream that stops without a finish reason was cut off, not finished.
        if (!state.finishReason) cut = 'cut';
      } catch (err) {
        awaitingUpstream = false;
        cut = idleTimedOut
          ? 'stall'
          : err instanceof UpstreamProtocolError && err.kind !== 'unreadable'
            ? err.kind
            : 'cut';
        // Only the error's class: provider messages can quote the key or the prompt.
        const error = err instanceof Error ? err.constructor.name : typeof err;
        if (!opts.clientSignal.aborted && !shuttingDown)
          rt.logger.warn(
            { error, provider: target.provider, model: target.model, reason: cut },
            'upstream stream failed after start',
          );
      }
      const estimate = state.usage ? null : estimateSegmentUsage(prepared, state, sent.slice(0, before));
      segments.push({
        target,
        usage: state.usage ?? estimate,
        cache: state.cache,
        estimated: estimate !== null,
        completed: cut === null,
        contentChars: sent.length - before,
      });
      if (cut === null || opts.clientSignal.aborted || shuttingDown) break;
      if (cut === 'cut')
        rt.logger.warn({ provider: target.provider, model: target.model }, 'upstream stream ended early');
      result.controller.abort();
      rt.breaker.record(result.credential, target.model, cut === 'stall' ? 'timeout' : 'server_error');
      const candidates = rest.filter((t) => acceptsPrefill(rt, t));
      if (state.toolCalls || state.manyChoices || candidates.length === 0) {
        errorCode = cut === 'stall' ? 'upstream_timeout' : 'upstream_error';
        break;
      }
      // A continuation is charged its prompt (with the answer so far) and a new allowance: reserved first.
      if (!(await reserveContinuation(rt, prepared, sent, opts.reserveMore))) {
        errorCode = 'rate_limited';
        break;
      }
      rt.metrics.continuation(target.provider, cut);
      try {
        awaitingUpstream = false;
        result = await start(candidates, sent);
      } catch (err) {
        if (err instanceof ClientGoneError) break;
        // The 200 is out: whatever went wrong, the stream still ends with its error event.
        if (!(err instanceof FallbackExhaustedError))
          rt.logger.error(
            { error: err instanceof Error ? err.constructor.name : typeof err },
            'stream continuation failed',
          );
        errorCode =
          err instanceof FallbackExhaustedError && err.error.code === 'upstream_timeout'
            ? 'upstream_timeout'
            : 'upstream_error';
        break;
      }
      rest = candidates.slice(result.index + 1);
      // The access-log line names the target that finished the answer, and how often it moved on.
      logUpstream(res, result);
      addAccessLogFields(res, { continuations: segments.length });
      rt.logger.info(
        {
          from_provider: target.provider,
          provider: result.target.provider,
          model: result.target.model,
          reason: cut,
        },
        'upstream stream continued on the next target',
      );
    }
  } finally {
    clearTimeout(idleTimer);
    res.off(DRAIN_DEADLINE_EVENT, onDrainDeadline);
  }

  // What the stream cost: each segment's provider usage if it arrived, else an
  // estimate of its prompt and of what it delivered (the provider generated at
  // least that much, whoever ended the stream).
  const usage = segments.reduce<ChatUsage | null>((sum, s) => addUsage(sum, s.usage), null);
  const cache = segments.reduce<CacheTokens | null>(
    (sum, s) =>
      s.cache ? { read: (sum?.read ?? 0) + s.cache.read, write: (sum?.write ?? 0) + s.cache.write } : sum,
    null,
  );
  const target = result.target;
  const outcomeOf = (status: number): StreamOutcome => ({
    status,
    target,
    usage,
    cache,
    estimated: segments.some((s) => s.estimated),
    segments,
  });
  if (opts.clientSignal.aborted) {
    sse.end();
    return { outcome: outcomeOf(CLIENT_CLOSED_STATUS), last: () => {} };
  }
  if (shuttingDown) errorCode = 'service_unavailable';
  // The frame (runAccounted) makes the record durable, then calls `last`: the final event
  // waits for it, and a record that cannot be kept ends the stream in an error instead of `done`.
  const outcome = outcomeOf(errorCode ? ERROR_CODES[errorCode].status : 200);
  return {
    outcome,
    async last(recorded) {
      const code = errorCode ?? (recorded ? null : 'service_unavailable');
      if (code) await format.error(sse, code);
      else
        await format.done(sse, {
          target,
          finishReason: state.finishReason ?? 'stop',
          usage: usage ?? toChatUsage(null),
          cache,
        });
      sse.end();
    },
  };
}

/** Reserves a continuation; false when a budget refuses it (the stream then ends in an error). */
async function reserveContinuation(
  rt: Pick<AiRuntime, 'completionAllowance' | 'logger'>,
  prepared: PreparedChat,
  prefill: string,
  reserveMore: AccountedCall['reserveMore'],
): Promise<boolean> {
  try {
    const cap = await reserveMore({
      promptTokens: estimateChatPrompt(prepared) + estimateTokens(prefill),
      completionTokens: completionAllowanceOf(prepared, rt.completionAllowance),
    });
    if (cap !== undefined) capCompletion(prepared, cap);
    return true;
  } catch (err) {
    rt.logger.warn(
      { error: isAppError(err) ? err.code : 'reserve_failed' },
      'stream continuation not reserved',
    );
    return false;
  }
}

/**
 * Tokens of a segment the provider reported no usage for: the prompt (with the
 * prefill a continuation was given) and what it delivered; null when it
 * delivered nothing.
 */
function estimateSegmentUsage(prepared: PreparedChat, state: StreamState, prefill: string): ChatUsage | null {
  if (!state.started) return null;
  const prompt = estimateChatPrompt(prepared) + (prefill ? estimateTokens(prefill) : 0);
  const completion = estimateTokens(state.delivered.join(''));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
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
  opts: Pick<AccountedCall, 'clientSignal' | 'requestId' | 'reserveMore'>,
): Promise<StreamAnswer> {
  return relayChatStream(rt, prepared, storedKeys, res, {
    clientSignal: opts.clientSignal,
    format: nativeStreamFormat(opts.requestId),
    reserveMore: opts.reserveMore,
  });
}
