import type { ChatUsage } from '@platform/contract';
import { estimateChatPrompt, estimateTokens } from '../../usage/estimate';
import type { CacheTokens } from '../chat';
import type { PreparedChat } from '../chat-request';
import type { Target } from '../config/lanes';
import type { StreamState } from './segment-reader';

/** How a continuation was asked for: the answer so far as an assistant prefill, or by instruction. */
export type ContinuationMode = 'prefill' | 'instruction';

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
  /** How this segment was asked to continue the answer; absent for the first. */
  mode?: ContinuationMode;
};

/**
 * How a stream really ended, whatever the 200 said: `completed` by its first
 * target, `continued` to its end on others, ended with an in-band `error`
 * event, or `aborted` by the client.
 */
export type StreamEnding = 'completed' | 'continued' | 'error' | 'aborted';

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
  ending: StreamEnding;
  /** The error code of an in-band error event. */
  error?: string;
  /** Why the stream ended in an error, in words safe to show (no provider text). */
  cause?: string;
  /** Several targets sent parts of it (the usage record's `continued`), whatever its ending. */
  continued?: boolean;
  /** The answer's text the client got (choice 0): the request log keeps it when the project captures content. */
  answer?: string;
};

export function addUsage(a: ChatUsage | null, b: ChatUsage | null): ChatUsage | null {
  if (!a) return b;
  if (!b) return a;
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

/**
 * What the stream cost: each segment's provider usage if it arrived, else an
 * estimate of its prompt and of what it delivered (the provider generated at
 * least that much, whoever ended the stream).
 */
export function sumSegments(segments: readonly StreamSegment[]): {
  usage: ChatUsage | null;
  cache: CacheTokens | null;
  estimated: boolean;
} {
  const sum = { usage: null as ChatUsage | null, cache: null as CacheTokens | null, estimated: false };
  for (const s of segments) {
    sum.usage = addUsage(sum.usage, s.usage);
    if (s.cache)
      sum.cache = {
        read: (sum.cache?.read ?? 0) + s.cache.read,
        write: (sum.cache?.write ?? 0) + s.cache.write,
      };
    if (s.estimated) sum.estimated = true;
  }
  return sum;
}

/**
 * Tokens of a segment the provider reported no usage for: the prompt (with
 * the answer so far a continuation was given) and what it delivered; null
 * when it delivered nothing.
 */
export function estimateSegmentUsage(
  prepared: PreparedChat,
  state: Pick<StreamState, 'started' | 'delivered'>,
  prefill: string,
): ChatUsage | null {
  if (!state.started) return null;
  const prompt = estimateChatPrompt(prepared) + (prefill ? estimateTokens(prefill) : 0);
  const completion = estimateTokens(state.delivered.text());
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The ending of a stream from what happened to it. */
export function endingOf(opts: {
  aborted: boolean;
  errorCode: string | null;
  segments: readonly StreamSegment[];
}): StreamEnding {
  if (opts.aborted) return 'aborted';
  if (opts.errorCode) return 'error';
  return opts.segments.length > 1 ? 'continued' : 'completed';
}

/**
 * The access-log fields of a stream's ending (a completed one adds only
 * `stream: 'completed'`): the targets that sent parts of it, how each was
 * asked, and the error code and cause of an in-band error.
 */
const COMPLETED: Readonly<Record<string, unknown>> = Object.freeze({ stream: 'completed' });

export function accessLogFieldsOf(outcome: StreamOutcome): Readonly<Record<string, unknown>> {
  if (outcome.ending === 'completed') return COMPLETED;
  const fields: Record<string, unknown> = { stream: outcome.ending };
  if (outcome.segments.length > 1) {
    fields.targets = outcome.segments.map((s) => `${s.target.provider}/${s.target.model}`);
    fields.continuations = outcome.segments.slice(1).map((s) => s.mode ?? 'prefill');
  }
  if (outcome.error) fields.stream_error = outcome.error;
  if (outcome.cause) fields.stream_error_cause = outcome.cause;
  return fields;
}
