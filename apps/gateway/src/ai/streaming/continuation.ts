import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Target } from '../config/lanes';
import type { ContinuationMode } from './stream-outcome';

/**
 * What a continuation by instruction asks after the answer so far (given as
 * the assistant's last message): go on from the exact character where it
 * stopped. Models mostly comply; some restate the last words, which the
 * overlap gate removes (overlap.ts), and a few rephrase, which nothing can
 * detect (docs/gateway-ai.md, "Continuation").
 */
export const CONTINUE_INSTRUCTION =
  'Your previous answer was cut off mid-stream. Continue it from the exact character where it stops. ' +
  'Do not repeat any of it, do not add a preface, a summary or any comment: output only the rest of the answer.';

/** Which targets a continuation tries, and how it asks them. */
export type ContinuationPlan = { mode: ContinuationMode; targets: readonly Target[] };

/**
 * The continuation chooser. Among the lane's targets not yet spent on this
 * answer (in lane order): those that take a prefill, by prefill, unless a
 * prefill round already failed; else all of them by instruction; null when
 * none is left. At most two rounds per cut, so a walk always ends.
 */
export function planContinuation(
  remaining: readonly Target[],
  takesPrefill: readonly boolean[],
  prefillTried: boolean,
): ContinuationPlan | null {
  if (!prefillTried) {
    const prefill = remaining.filter((_, i) => takesPrefill[i]);
    if (prefill.length > 0) return { mode: 'prefill', targets: prefill };
  }
  return remaining.length > 0 ? { mode: 'instruction', targets: remaining } : null;
}

/**
 * The messages of a continuation: the conversation, the answer so far as the
 * assistant's message, and (by instruction) a user message asking to go on.
 * Nothing sent yet (only reasoning streamed): the conversation as it was.
 */
export function continuationMessages<M extends { role: string }>(
  messages: readonly M[],
  sent: string,
  mode: ContinuationMode,
): Array<M | ChatCompletionMessageParam> {
  if (sent === '') return [...messages];
  const answer: ChatCompletionMessageParam = { role: 'assistant', content: sent };
  if (mode === 'prefill') return [...messages, answer];
  return [...messages, answer, { role: 'user', content: CONTINUE_INSTRUCTION }];
}

/** Why a cut could not be continued, in words safe to show a caller (names from the lanes config only). */
export function cutCause(
  target: Target,
  reason: string,
  why: 'no_target' | 'tool_calls' | 'many_choices' | 'failed' | 'budget',
  failure?: string,
): string {
  const what = reason === 'stall' ? 'stalled' : reason === 'cut' ? 'was cut' : `broke (${reason})`;
  const head = `the stream from ${target.provider}/${target.model} ${what}`;
  switch (why) {
    case 'no_target':
      return `${head}; no target was left to continue it`;
    case 'tool_calls':
      return `${head}; an answer with tool calls cannot be continued`;
    case 'many_choices':
      return `${head}; an answer with several choices cannot be continued`;
    case 'budget':
      return `${head}; a budget could not hold its continuation`;
    default:
      return `${head}; its continuation failed (${failure ?? 'upstream_error'})`;
  }
}
