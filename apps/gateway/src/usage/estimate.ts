import { lruCache } from '../cache/lru';
import { countO200kTokens as countTokens } from './bpe-count';

/**
 * Characters one estimate tokenizes at most: ~60 µs of CPU per 1,000
 * characters (measured, o200k_base) would let one 8 MiB prompt hold the event
 * loop for half a second. Past it (per text, and per request's messages in
 * all; tool definitions have their own) the estimate is one token per two
 * characters, above what BPE tokenizers give for text and JSON.
 */
export const TOKENIZE_MAX_CHARS = 64 * 1024;

/** Tokens of a text: o200k_base (OpenAI's current encoding, bpe-count.ts) for ordinary sizes. */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > TOKENIZE_MAX_CHARS) return Math.ceil(text.length / 2);
  return countTokens(text);
}

/** Per message, what chat formats add around the content (role, separators), as OpenAI documents it. */
const PER_MESSAGE_TOKENS = 4;
/**
 * An image in a prompt, whatever its size: above what the providers charge
 * for one (OpenAI ~765 at high detail for 1024 px, Anthropic ~1,600 at 1.15
 * megapixels), since the bytes say little about it.
 */
export const IMAGE_TOKENS = 1_600;
/** Content part types that are images: counted as IMAGE_TOKENS, their data not read. */
const IMAGE_PARTS: ReadonlySet<string> = new Set(['image', 'image_url', 'input_image']);
/** Object keys that name structure, not text the model reads. */
const SKIPPED_KEYS: ReadonlySet<string> = new Set(['type', 'cache_control', 'role']);

/**
 * A running estimate: tokens so far, the characters the tokenizer may still
 * take, and the work done (characters and parts looked at, tokenized or not).
 */
type Tally = { tokens: number; budget: number; work: number };

function addText(tally: Tally, text: string): void {
  tally.work += text.length;
  if (text.length === 0) return;
  if (text.length > tally.budget) {
    tally.tokens += Math.ceil(text.length / 2);
    return;
  }
  tally.budget -= text.length;
  tally.tokens += countTokens(text);
}

/** Text, text parts, tool calls and results of a message's content (any chat format), images at IMAGE_TOKENS. */
function addContent(tally: Tally, value: unknown, depth: number): void {
  tally.work += 1;
  if (typeof value === 'string') {
    addText(tally, value);
    return;
  }
  if (depth > 8 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) addContent(tally, item, depth + 1);
    return;
  }
  const part = value as Record<string, unknown>;
  if (typeof part.type === 'string' && IMAGE_PARTS.has(part.type)) {
    tally.tokens += IMAGE_TOKENS;
    return;
  }
  for (const key in part) if (!SKIPPED_KEYS.has(key)) addContent(tally, part[key], depth + 1);
}

/** Tool calls as the model sees them: their JSON. */
function addJson(tally: Tally, value: unknown): void {
  if (value === undefined || value === null) return;
  addText(tally, JSON.stringify(value));
}

/**
 * Tokens of tool definitions by their JSON. Agents send the same tools with
 * every request (10k tokens and more: ~0.8 ms to tokenize), so the count of
 * each JSON text is kept; past TOKENIZE_MAX_CHARS one token per two characters.
 */
const toolTokens = lruCache<string, number>({ max: 256 });

function addTools(tally: Tally, tools: unknown): void {
  if (tools === undefined || tools === null) return;
  const json = JSON.stringify(tools);
  if (json.length > TOKENIZE_MAX_CHARS) {
    tally.tokens += Math.ceil(json.length / 2);
    return;
  }
  let tokens = toolTokens.get(json);
  if (tokens === undefined) {
    tokens = countTokens(json);
    toolTokens.set(json, tokens);
  }
  tally.tokens += tokens;
}

type MessageLike = { content?: unknown; tool_calls?: unknown };

/** What a chat prompt is estimated from: the chat params, or a request passed through in its own format. */
export type PromptSource = {
  params: { messages: readonly MessageLike[]; tools?: unknown; functions?: unknown };
  native?: { body: Record<string, unknown> } | undefined;
};

/**
 * Prompt tokens of chat messages: their text (with tool calls and results)
 * through the tokenizer plus the per-message framing, images at IMAGE_TOKENS.
 */
export function estimatePromptTokens(messages: readonly MessageLike[], tools?: unknown): number {
  const tally: Tally = { tokens: 3, budget: TOKENIZE_MAX_CHARS, work: 0 };
  addMessages(tally, messages, tools);
  return tally.tokens;
}

function addMessages(tally: Tally, messages: readonly MessageLike[], tools: unknown): void {
  for (const m of messages) {
    tally.tokens += PER_MESSAGE_TOKENS;
    addContent(tally, m.content, 0);
    if (m.tool_calls !== undefined) addJson(tally, m.tool_calls);
  }
  addTools(tally, tools);
}

/** A passed-through Anthropic body: system blocks, messages and tools. */
function estimateNative(body: Record<string, unknown>): number {
  const tally: Tally = { tokens: 3, budget: TOKENIZE_MAX_CHARS, work: 0 };
  addContent(tally, body.system, 0);
  const messages = Array.isArray(body.messages) ? (body.messages as MessageLike[]) : [];
  for (const m of messages) {
    tally.tokens += PER_MESSAGE_TOKENS;
    addContent(tally, m.content, 0);
  }
  addTools(tally, body.tools);
  return tally.tokens;
}

/**
 * One estimate per request: the reservation, and a charge without provider
 * usage, read the same one. Only dear estimates are kept: a WeakMap entry
 * costs about what tokenizing a short prompt does (an identity hash, an
 * ephemeron for the collector), and most requests never ask twice (the
 * provider reports usage); a short one is counted again, to the same number.
 */
const memo = new WeakMap<object, number>();
/** Work (characters and parts) under which an estimate is not kept: ~1 µs to count again. */
const MEMO_MIN_WORK = 1_024;

/**
 * Prompt tokens of a chat request as the dearest of its forms (the chat
 * params, and the body a native target gets): messages, system blocks,
 * tools, tool calls and results, images. Computed once per request, or,
 * for a short prompt of plain messages, each time it is asked (the same
 * number: the count depends only on the messages and tools).
 */
export function estimateChatPrompt(chat: PromptSource): number {
  // Stable across the copies capCompletion makes of the params and the body.
  const nativeMessages = chat.native?.body.messages;
  const key =
    typeof nativeMessages === 'object' && nativeMessages !== null ? nativeMessages : chat.params.messages;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const { params } = chat;
  const tools = params.tools ?? params.functions;
  const tally: Tally = { tokens: 3, budget: TOKENIZE_MAX_CHARS, work: 0 };
  addMessages(tally, params.messages, tools);
  let tokens = tally.tokens;
  if (chat.native) tokens = Math.max(tokens, estimateNative(chat.native.body));
  const cheap = !chat.native && (tools === undefined || tools === null) && tally.work < MEMO_MIN_WORK;
  if (!cheap) memo.set(key, tokens);
  return tokens;
}

/** Tokens of several texts (an embeddings input), the tokenizer's share bounded per request. */
export function estimateTexts(texts: readonly string[]): number {
  const tally: Tally = { tokens: 0, budget: TOKENIZE_MAX_CHARS, work: 0 };
  for (const text of texts) addText(tally, text);
  return tally.tokens;
}
