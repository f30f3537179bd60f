import type { ChatUsage } from '@platform/contract';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { type CacheTokens, cacheTokensOf, toChatUsage } from '../chat';
import { UpstreamProtocolError } from '../providers/upstream-errors';
import type { StreamWatch } from './stream-watch';
import { TextPieces } from './text-pieces';

/** What is known of one target's segment of the answer while it is read. */
export type StreamState = {
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
  delivered: TextPieces;
};

/** An upstream stream opened and read up to its first output. */
export type StartedStream = { iterator: AsyncIterator<ChatCompletionChunk>; state: StreamState };

export function emptyStreamState(): StreamState {
  return {
    pending: [],
    started: false,
    finishReason: null,
    usage: null,
    cache: null,
    ended: false,
    toolCalls: false,
    manyChoices: false,
    delivered: new TextPieces(),
  };
}

/** Notes what one chunk says: output, tool calls, other choices, finish reason, usage. */
export function noteChunk(chunk: ChatCompletionChunk, state: StreamState): void {
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

/** The continuation's chunks carry no second `role` delta: the caller sees one answer. */
export function withoutRole(chunk: ChatCompletionChunk): ChatCompletionChunk {
  for (const choice of chunk.choices) {
    if (choice.delta?.role !== undefined) delete choice.delta.role;
  }
  return chunk;
}

/**
 * Reads an opened upstream stream until its first output (or its end). Until
 * then nothing has been sent to the client, so any failure here still falls
 * back to the next target. `continued`: a continuation, whose role delta is dropped.
 */
export async function readToFirstOutput(
  iterator: AsyncIterator<ChatCompletionChunk>,
  signal: AbortSignal,
  continued: boolean,
): Promise<StartedStream> {
  const state = emptyStreamState();
  while (!state.started) {
    const next = await iterator.next();
    if (next.done) {
      state.ended = true;
      break;
    }
    const chunk = continued ? withoutRole(next.value) : next.value;
    noteChunk(chunk, state);
    state.pending.push(chunk);
  }
  // A stream that ended quietly while our signal fired still counts as a timeout/disconnect.
  if (signal.aborted) throw new Error('upstream request aborted');
  return { iterator, state };
}

/** Why a started segment stopped short of its finish reason. */
export type CutReason = 'cut' | 'stall' | 'garbled' | 'error_event';

/** How reading a segment ended: null cut when it finished; `error` is the failure's class name only. */
export type SegmentEnd = { cut: CutReason | null; error: string | null };

/**
 * Relays one started segment: its pending chunks, then every chunk as it
 * comes, through `relay` (which returns a promise only when the client's
 * socket pushes back). A stream that stops without a finish reason was cut.
 */
export async function readSegment(
  started: StartedStream,
  opts: {
    watch: StreamWatch;
    continued: boolean;
    relay: (chunk: ChatCompletionChunk) => Promise<void> | undefined;
  },
): Promise<SegmentEnd> {
  const { iterator, state } = started;
  try {
    for (const chunk of state.pending.splice(0)) await opts.relay(chunk);
    while (!state.ended) {
      opts.watch.waiting(true);
      const next = await iterator.next();
      opts.watch.waiting(false);
      if (next.done) break;
      // After the start, chunks go straight out: an await only when the client's socket pushes back.
      const chunk = opts.continued ? withoutRole(next.value) : next.value;
      noteChunk(chunk, state);
      const wait = opts.relay(chunk);
      if (wait) await wait;
    }
    return { cut: state.finishReason ? null : 'cut', error: null };
  } catch (err) {
    opts.watch.waiting(false);
    const cut: CutReason = opts.watch.stalled
      ? 'stall'
      : err instanceof UpstreamProtocolError && err.kind !== 'unreadable'
        ? err.kind
        : 'cut';
    // Only the error's class: provider messages can quote the key or the prompt.
    return { cut, error: err instanceof Error ? err.constructor.name : typeof err };
  }
}
