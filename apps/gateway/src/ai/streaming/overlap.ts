import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/**
 * Characters looked at on each side when a continuation by instruction
 * restates the end of what was already sent: the last OVERLAP_WINDOW of the
 * sent text, the first OVERLAP_WINDOW of the new one. A model that repeats
 * more than this is relayed with the repetition (docs/gateway-ai.md).
 */
export const OVERLAP_WINDOW = 400;

/**
 * Shorter overlaps are kept: three characters or fewer that happen to match
 * ("the", a space) are more often new text than a restatement. A model that
 * starts the whole answer over is the exception: all of the sent text,
 * however short, is a restatement.
 */
export const MIN_OVERLAP = 4;

/**
 * Length of the longest suffix of `sent` that is also a prefix of `next`,
 * within `window` characters of each (0 below MIN_OVERLAP unless it is all of
 * `sent`: the answer started over). Knuth-Morris-Pratt:
 * the prefix function of the head of `next`, then one pass over the tail of
 * `sent`; linear in the window, no backtracking.
 */
export function overlapLength(sent: string, next: string, window = OVERLAP_WINDOW): number {
  const head = next.length > window ? next.slice(0, window) : next;
  const tail = sent.length > window ? sent.slice(sent.length - window) : sent;
  if (head.length === 0 || tail.length === 0) return 0;
  const fail = new Int32Array(head.length);
  for (let i = 1, k = 0; i < head.length; i++) {
    while (k > 0 && head.charCodeAt(i) !== head.charCodeAt(k)) k = fail[k - 1] as number;
    if (head.charCodeAt(i) === head.charCodeAt(k)) k++;
    fail[i] = k;
  }
  let k = 0;
  for (let i = 0; i < tail.length; i++) {
    // A whole match in the middle of the tail: fall back to keep looking for one that ends at its end.
    if (k === head.length) k = fail[k - 1] as number;
    while (k > 0 && tail.charCodeAt(i) !== head.charCodeAt(k)) k = fail[k - 1] as number;
    if (tail.charCodeAt(i) === head.charCodeAt(k)) k++;
  }
  return k >= MIN_OVERLAP || k === sent.length ? k : 0;
}

/** Content of choice 0 in a chunk ('' when none). */
export function contentOf(chunk: ChatCompletionChunk): string {
  const first = chunk.choices[0];
  return first?.index === 0 && typeof first.delta?.content === 'string' ? first.delta.content : '';
}

/**
 * Holds a continuation's first chunks until enough text arrived to tell how
 * much of it restates what was sent (or its finish reason came), then lets
 * them through without that overlap; every later chunk passes untouched.
 */
export type OverlapGate = {
  /** The chunks to relay now (none while holding). */
  push(chunk: ChatCompletionChunk): ChatCompletionChunk[];
  /** The held chunks, trimmed: the segment ended before the gate opened. */
  end(): ChatCompletionChunk[];
  /** Characters removed as overlap (known once the gate opened). */
  readonly removed: number;
};

export function createOverlapGate(sent: string, window = OVERLAP_WINDOW): OverlapGate {
  const need = Math.min(window, sent.length);
  let held: ChatCompletionChunk[] | null = [];
  let text = '';
  let removed = 0;
  const open = (): ChatCompletionChunk[] => {
    const chunks = held ?? [];
    held = null;
    removed = overlapLength(sent, text, window);
    return trimContent(chunks, removed);
  };
  return {
    push(chunk) {
      if (held === null) return [chunk];
      held.push(chunk);
      text += contentOf(chunk);
      const finished = chunk.choices.some((c) => c.finish_reason);
      return text.length >= need || finished ? open() : [];
    },
    end: () => (held === null ? [] : open()),
    get removed() {
      return removed;
    },
  };
}

/** Drops the first `count` characters of choice 0's content, and chunks left with nothing to say. */
function trimContent(chunks: ChatCompletionChunk[], count: number): ChatCompletionChunk[] {
  if (count === 0) return chunks;
  let left = count;
  const out: ChatCompletionChunk[] = [];
  for (const chunk of chunks) {
    const choice = chunk.choices[0];
    const content = contentOf(chunk);
    if (left > 0 && choice?.delta && content) {
      const cut = Math.min(left, content.length);
      left -= cut;
      choice.delta.content = content.slice(cut);
      const empty =
        choice.delta.content === '' &&
        !choice.finish_reason &&
        !choice.delta.tool_calls &&
        !chunk.usage &&
        chunk.choices.length === 1;
      if (empty) continue;
    }
    out.push(chunk);
  }
  return out;
}
