import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Texts longer than this are not tokenized for a reservation: ~60 µs of CPU
 * per 1,000 characters (measured, o200k_base) would let one 8 MiB prompt hold
 * the event loop for half a second. Past it the estimate is one token per two
 * characters, above what BPE tokenizers give for text.
 */
export const TOKENIZE_MAX_CHARS = 64 * 1024;

/** Tokens of a text: gpt-tokenizer's o200k_base (OpenAI's current encoding) for ordinary sizes. */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > TOKENIZE_MAX_CHARS) return Math.ceil(text.length / 2);
  return countTokens(text);
}

/** Per message, what chat formats add around the content (role, separators), as OpenAI documents it. */
const PER_MESSAGE_TOKENS = 4;

type MessageLike = { content?: unknown };

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        part && typeof part === 'object' && 'text' in part && typeof part.text === 'string' ? part.text : '',
      )
      .join('');
  }
  return '';
}

/** Prompt tokens of chat messages: their text through the tokenizer plus the per-message framing. */
export function estimatePromptTokens(messages: readonly MessageLike[]): number {
  let total = 3;
  for (const m of messages) total += PER_MESSAGE_TOKENS + estimateTokens(textOf(m.content));
  return total;
}
