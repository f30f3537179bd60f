import type { ChatUsage } from '@platform/contract';
import { ERROR_CODES, isAppError } from '@platform/errors';
import { addAccessLogFields } from '@platform/logging';
import type { Response } from 'express';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { captureChatContent } from '../../observability/spans';
import { estimateChatPrompt, estimateTokens } from '../../usage/estimate';
import { type AccountedCall, CLIENT_CLOSED_STATUS } from '../accounting';
import { type CacheTokens, toChatUsage, upstreamChatParams } from '../chat';
import type { PreparedChat } from '../chat-request';
import type { Target } from '../config/lanes';
import { ClientGoneError, FallbackExhaustedError, type FallbackResult } from '../fallback';
import { announceDroppedParams } from '../field-policy';
import { UpstreamHttpError } from '../providers/upstream-errors';
import { capCompletion, completionAllowanceOf } from '../reserve';
import { runTargets } from '../run-targets';
import type { AiRuntime, StoredKeys } from '../runtime';
import { continuationMessages, cutCause, planContinuation } from './continuation';
import { contentOf, createOverlapGate, type OverlapGate } from './overlap';
import {
  type CutReason,
  readSegment,
  readToFirstOutput,
  type SegmentEnd,
  type StartedStream,
} from './segment-reader';
import { openSse, type SseWriter } from './sse-writer';
import {
  accessLogFieldsOf,
  type ContinuationMode,
  endingOf,
  estimateSegmentUsage,
  type StreamOutcome,
  sumSegments,
} from './stream-outcome';
import { type StreamWatch, watchStream } from './stream-watch';
import { TextPieces } from './text-pieces';

export type { StreamOutcome, StreamSegment } from './stream-outcome';

/** A relayed stream for the frame: its outcome, and its final event once the record is kept. */
export type StreamAnswer = { outcome: StreamOutcome; last(recorded: boolean): Promise<void> | void };

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
  /**
   * The provider failed after the stream started; this is the last thing sent.
   * `cause` says why in words safe to show (which target's stream broke and why it was not continued).
   */
  error(sse: SseWriter, code: StreamErrorCode, cause?: string): Promise<void>;
};

/**
 * Whether a target may finish an answer another one started by prefill: its
 * lanes config `accepts_prefill`, else its provider's (the catalogue's
 * `prefill`). What a target was learned to refuse is checked apart (PrefillMemory).
 */
export function acceptsPrefill(rt: Pick<AiRuntime, 'catalog'>, target: Target): boolean {
  return target.accepts_prefill ?? rt.catalog.get(target.provider)?.prefill ?? false;
}

/** A continuation being opened: how it asks, and the answer so far. */
type Continuing = { mode: ContinuationMode; sent: string };

/** One relayed stream's state, shared by its parts below. */
type Run = {
  rt: AiRuntime;
  prepared: PreparedChat;
  storedKeys: StoredKeys;
  res: Response;
  opts: RelayOptions;
  /** The target of the attempt under way (garbled events are counted against it). */
  current: Target;
  /** Targets tried on this answer (they failed or answered and broke); a prefill refusal does not spend one. */
  spent: Set<Target>;
  /** Upstream attempts across retries, fallbacks and continuations. */
  attempts: number;
  segments: StreamOutcome['segments'];
  /** The answer's text the client got so far (choice 0): what a continuation goes on from. */
  sent: TextPieces;
  /** Removes what a continuation by instruction restates; null otherwise. */
  gate: OverlapGate | null;
  /** How the answer's last segment was asked for (absent: the first segment). */
  mode: ContinuationMode | undefined;
  /** The first break of the answer: an error that ends the stream names it. */
  firstCut: { target: Target; reason: CutReason } | null;
};

type RelayOptions = {
  clientSignal: AbortSignal;
  format: StreamFormat;
  /** Reserves a continuation's prompt and allowance (AccountedCall.reserveMore). */
  reserveMore: AccountedCall['reserveMore'];
};

/**
 * A streamed completion after validation, written in `format`. Errors before
 * the first output propagate (JSON error, fallback already tried). After it,
 * a stream that is cut, stalls past the lane's idle limit or sends two
 * unparseable events in a row goes on at another target of the lane: by
 * prefill where one takes it, else by instruction (continuation.ts); only the
 * new text is relayed, so the caller sees one answer. Without a target left
 * (or for an answer with tool calls or several choices) the stream ends with
 * `format.error` naming the cut. Every stream ends with `done` or `error`,
 * except when the client itself went away.
 */
export async function relayChatStream(
  rt: AiRuntime,
  prepared: PreparedChat,
  storedKeys: StoredKeys,
  res: Response,
  opts: RelayOptions,
): Promise<StreamAnswer> {
  const run: Run = {
    rt,
    prepared,
    storedKeys,
    res,
    opts,
    current: prepared.targets[0] as Target,
    spent: new Set(),
    attempts: 0,
    segments: [],
    sent: new TextPieces(),
    gate: null,
    mode: undefined,
    firstCut: null,
  };
  let result = await openTargets(run, prepared.targets, null);
  announceDroppedParams(rt, res, prepared, result.target);
  const lane = rt.config.lanes[prepared.lane];
  const sse = openSse(res, { keepAliveMs: rt.keepAliveMs });
  const watch = watchStream(res, lane?.stream_idle_timeout_ms ?? rt.idleTimeoutMs);
  let failure: { code: StreamErrorCode; cause: string } | null = null;
  try {
    for (;;) {
      watch.follow(result.controller);
      const end = await relaySegment(run, result, sse, watch);
      if (end.cut === null || opts.clientSignal.aborted || watch.shuttingDown) break;
      const next = await continueAfterCut(run, result, end.cut);
      if (next === 'gone') break;
      if ('code' in next) {
        failure = next;
        break;
      }
      result = next;
    }
  } finally {
    watch.close();
  }
  if (watch.shuttingDown && !opts.clientSignal.aborted)
    failure = { code: 'service_unavailable', cause: 'the server shut down during the stream' };
  return finishStream(run, result, sse, failure);
}

/**
 * One walk over `targets` until a stream starts answering: the first one
 * (`continuing` null) or a continuation. A target refusing the prefill is
 * learned (PrefillMemory) and stays usable by instruction.
 */
function openTargets(
  run: Run,
  targets: readonly Target[],
  continuing: Continuing | null,
): Promise<FallbackResult<StartedStream>> {
  const { rt, prepared } = run;
  const onGarbled = () => {
    rt.metrics.garbledEvent(run.current.provider);
    rt.logger.warn(
      { provider: run.current.provider, model: run.current.model },
      'upstream stream event unreadable, skipped',
    );
  };
  return runTargets(rt, {
    endpoint: 'stream',
    targets,
    storedKeys: run.storedKeys,
    clientSignal: run.opts.clientSignal,
    lane: prepared.lane,
    stream: true,
    attempt: async ({ target, credential, signal }) => {
      run.current = target;
      run.attempts += 1;
      run.spent.add(target);
      const params = upstreamChatParams(prepared, target);
      const messages = continuing
        ? continuationMessages(params.messages, continuing.sent, continuing.mode)
        : params.messages;
      const body = { ...params, messages, stream: true, stream_options: { include_usage: true } };
      // Off unless the operator asked for message content on spans (docs/observability.md).
      captureChatContent(messages);
      // A client's own-format request (native) goes as sent only the first time: a
      // continuation's messages exist in the chat shape alone, which every client translates.
      const native = continuing ? undefined : prepared.native;
      try {
        const iterator = await rt.providers.chat(credential).stream(body, signal, onGarbled, native);
        return await readToFirstOutput(iterator, signal, continuing !== null);
      } catch (err) {
        if (continuing?.mode === 'prefill' && isPrefillRefusal(err)) {
          run.spent.delete(target);
          await rt.prefillMemory.learn(target, err.reading?.reason ?? null);
        }
        throw err;
      }
    },
  });
}

function isPrefillRefusal(err: unknown): err is UpstreamHttpError {
  return err instanceof UpstreamHttpError && err.reading?.kind === 'prefill';
}

/**
 * Relays one target's segment (through the overlap gate of a continuation by
 * instruction) and keeps what it cost; a failure after the start is logged.
 */
async function relaySegment(
  run: Run,
  result: FallbackResult<StartedStream>,
  sse: SseWriter,
  watch: StreamWatch,
): Promise<SegmentEnd> {
  const { rt, opts } = run;
  const { target } = result;
  const before = run.sent.length;
  const send = (chunk: ChatCompletionChunk) => {
    run.sent.push(contentOf(chunk));
    return opts.format.chunk(sse, chunk, target);
  };
  const gate = run.gate;
  const relay = gate ? (chunk: ChatCompletionChunk) => sendAll(gate.push(chunk), send) : send;
  const end = await readSegment(result.value, { watch, continued: run.segments.length > 0, relay });
  if (gate) await sendAll(gate.end(), send);
  const state = result.value.state;
  if (end.error !== null && !opts.clientSignal.aborted && !watch.shuttingDown)
    rt.logger.warn(
      { error: end.error, provider: target.provider, model: target.model, reason: end.cut },
      'upstream stream failed after start',
    );
  const estimate = state.usage
    ? null
    : estimateSegmentUsage(run.prepared, state, run.sent.text().slice(0, before));
  run.segments.push({
    target,
    usage: state.usage ?? estimate,
    cache: state.cache,
    estimated: estimate !== null,
    completed: end.cut === null,
    contentChars: run.sent.length - before,
    ...(run.mode ? { mode: run.mode } : {}),
  });
  return end;
}

/** Sends chunks in order; a promise only when the client's socket pushed back. */
function sendAll(
  chunks: ChatCompletionChunk[],
  send: (chunk: ChatCompletionChunk) => Promise<void> | undefined,
): Promise<void> | undefined {
  let wait: Promise<void> | undefined;
  for (const chunk of chunks) wait = send(chunk) ?? wait;
  return wait;
}

/**
 * After a cut: the next segment, chosen by planContinuation (prefill first,
 * then instruction), reserved first; or the error that ends the stream with
 * its cause; or 'gone' when the client left meanwhile.
 */
async function continueAfterCut(
  run: Run,
  cutResult: FallbackResult<StartedStream>,
  cut: CutReason,
): Promise<FallbackResult<StartedStream> | { code: StreamErrorCode; cause: string } | 'gone'> {
  const { rt, prepared } = run;
  const from = cutResult.target;
  const state = cutResult.value.state;
  if (cut === 'cut')
    rt.logger.warn({ provider: from.provider, model: from.model }, 'upstream stream ended early');
  cutResult.controller.abort();
  rt.breaker.record(cutResult.credential, from.model, cut === 'stall' ? 'timeout' : 'server_error');
  const lost = cut === 'stall' ? 'upstream_timeout' : 'upstream_error';
  run.firstCut ??= { target: from, reason: cut };
  const first = run.firstCut;
  const cause = (why: Parameters<typeof cutCause>[2], failure?: string) =>
    cutCause(first.target, first.reason, why, failure);
  if (state.toolCalls) return { code: lost, cause: cause('tool_calls') };
  if (state.manyChoices) return { code: lost, cause: cause('many_choices') };
  let prefillTried = false;
  for (;;) {
    const remaining = prepared.targets.filter((t) => !run.spent.has(t));
    const takes = await Promise.all(
      remaining.map(async (t) => acceptsPrefill(rt, t) && !(await rt.prefillMemory.refuses(t))),
    );
    const plan = planContinuation(remaining, takes, prefillTried);
    if (!plan) return { code: lost, cause: cause('no_target') };
    // Charged its prompt (with the answer so far) and a new allowance: reserved before the first round.
    if (!prefillTried && !(await reserveContinuation(rt, prepared, run.sent.text(), run.opts.reserveMore)))
      return { code: 'rate_limited', cause: cause('budget') };
    try {
      const next = await openTargets(run, plan.targets, { mode: plan.mode, sent: run.sent.text() });
      noteContinued(run, from, next, cut, plan.mode);
      return next;
    } catch (err) {
      if (err instanceof ClientGoneError) return 'gone';
      if (err instanceof FallbackExhaustedError && plan.mode === 'prefill') {
        prefillTried = true;
        continue;
      }
      // The 200 is out: whatever went wrong, the stream still ends with its error event.
      if (!(err instanceof FallbackExhaustedError))
        rt.logger.error(
          { error: err instanceof Error ? err.constructor.name : typeof err },
          'stream continuation failed',
        );
      const code = err instanceof FallbackExhaustedError ? err.error.code : 'upstream_error';
      return {
        code: code === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_error',
        cause: cause('failed', code),
      };
    }
  }
}

/** A continuation started: counted, logged, and the overlap gate set for one by instruction. */
function noteContinued(
  run: Run,
  from: Target,
  next: FallbackResult<StartedStream>,
  cut: CutReason,
  mode: ContinuationMode,
): void {
  run.mode = mode;
  run.gate = mode === 'instruction' ? createOverlapGate(run.sent.text()) : null;
  run.rt.metrics.continuation(from.provider, cut, mode);
  run.rt.logger.info(
    {
      from_provider: from.provider,
      provider: next.target.provider,
      model: next.target.model,
      reason: cut,
      mode,
    },
    'upstream stream continued on the next target',
  );
}

/**
 * The stream's outcome (usage summed over its segments, its real ending) on
 * the access-log line and in the metrics, and its last event, sent once the
 * frame kept the record.
 */
function finishStream(
  run: Run,
  result: FallbackResult<StartedStream>,
  sse: SseWriter,
  failure: { code: StreamErrorCode; cause: string } | null,
): StreamAnswer {
  const { rt, res, opts, prepared } = run;
  const { usage, cache, estimated } = sumSegments(run.segments);
  const target = result.target;
  const aborted = opts.clientSignal.aborted;
  const ending = endingOf({ aborted, errorCode: failure?.code ?? null, segments: run.segments });
  const status = aborted ? CLIENT_CLOSED_STATUS : failure ? ERROR_CODES[failure.code].status : 200;
  const outcome: StreamOutcome = {
    status,
    target,
    usage,
    cache,
    estimated,
    segments: run.segments,
    ending,
    answer: run.sent.text(),
  };
  if (run.segments.length > 1) outcome.continued = true;
  if (failure && !aborted) {
    outcome.error = failure.code;
    outcome.cause = failure.cause;
  }
  // One access-log addition, as before the split: the target that finished the answer, every
  // attempt (retries and continuations included) and the real ending.
  addAccessLogFields(res, {
    provider: target.provider,
    model: target.model,
    attempts: run.attempts,
    upstream_ms: result.latencyMs,
    ...accessLogFieldsOf(outcome),
  });
  rt.metrics.streamEnded(prepared.lane, ending, outcome.error ?? 'none');
  if (aborted) {
    sse.end();
    return { outcome, last: () => {} };
  }
  const finishReason = result.value.state.finishReason ?? 'stop';
  // The frame (runAccounted) makes the record durable, then calls `last`: the final event
  // waits for it, and a record that cannot be kept ends the stream in an error instead of `done`.
  return {
    outcome,
    async last(recorded) {
      const code = failure?.code ?? (recorded ? null : 'service_unavailable');
      // A shutdown is its own explanation; the cause of a break goes to the caller.
      if (code)
        await opts.format.error(sse, code, code === 'service_unavailable' ? undefined : failure?.cause);
      else await opts.format.done(sse, { target, finishReason, usage: usage ?? toChatUsage(null), cache });
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
