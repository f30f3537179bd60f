import type { Caller } from '../admission/caller';
import type { BudgetActual, BudgetRequest, Reservation } from '../budgets/budgets';
import { estimateChatPrompt } from '../usage/estimate';
import {
  type MediaUse,
  mediaCostMicros,
  type PriceTable,
  priceOf,
  type TokenPrice,
  tokenPriceOf,
} from '../usage/pricing';
import type { PreparedChat } from './chat-request';
import type { Target } from './config/lanes';

/** What an AI route tells the accounting frame about its request before the upstream call. */
export type AccountedRequest = {
  projectId: string;
  endpoint: string;
  lane: string | null;
  chat?: PreparedChat;
  targets?: readonly Target[];
  /** A media request: reserved at its dearest target's cost, whole or not at all. */
  media?: MediaUse;
  /** Prompt tokens of a request without chat messages (embeddings' input). */
  inputTokens?: number;
};

/** The dearest of the targets' token prices (by a typical 3:1 prompt:completion mix): what a reservation assumes. */
function dearestPrice(
  rt: { prices: PriceTable },
  targets: readonly Target[],
  at: number,
): TokenPrice | undefined {
  let best: TokenPrice | undefined;
  for (const t of targets) {
    const p = tokenPriceOf(priceOf(rt.prices, t.provider, t.model, at));
    if (p && (!best || 3 * p.input + p.output > 3 * best.input + best.output)) best = p;
  }
  return best;
}

/** The dearest of the targets' costs for a media request: what it reserves. */
function dearestMediaCost(
  rt: { prices: PriceTable },
  targets: readonly Target[],
  use: MediaUse,
  at: number,
): number {
  let most = 0;
  for (const t of targets) {
    most = Math.max(most, mediaCostMicros(priceOf(rt.prices, t.provider, t.model, at), use));
  }
  return most;
}

type CompletionLimits = { max_tokens?: number | null; max_completion_tokens?: number | null };

/**
 * The completion tokens a chat may produce: the largest of the limits it
 * carries (`max_tokens`, `max_completion_tokens`; the Responses API's
 * `max_output_tokens` arrives as `max_tokens`; a passed-through Anthropic
 * body's own `max_tokens`), else the server's allowance.
 */
export function completionAllowanceOf(chat: PreparedChat, fallback: number): number {
  const params = chat.params as CompletionLimits;
  const native = chat.native?.body;
  let most = 0;
  for (const n of [
    params.max_tokens,
    params.max_completion_tokens,
    native?.max_tokens,
    native?.max_output_tokens,
  ]) {
    if (typeof n === 'number' && n > most) most = n;
  }
  return most > 0 ? most : fallback;
}

/**
 * Asks the upstream for at most `cap` completion tokens, in whichever field
 * the request carries its limit (`max_completion_tokens` stays the only one
 * when it is: reasoning models refuse `max_tokens`).
 */
export function capCompletion(chat: PreparedChat, cap: number): void {
  const params = chat.params as CompletionLimits;
  const capped: CompletionLimits = {};
  if (typeof params.max_completion_tokens === 'number')
    capped.max_completion_tokens = Math.min(params.max_completion_tokens, cap);
  if (typeof params.max_tokens === 'number' || capped.max_completion_tokens === undefined)
    capped.max_tokens = Math.min(params.max_tokens ?? Infinity, cap);
  chat.params = { ...chat.params, ...capped } as PreparedChat['params'];
  // A request passed through in its own format carries its own limit: Anthropic's
  // max_tokens (always there), the Responses API's max_output_tokens (set when absent:
  // the model must not write past what the budget reserved).
  const native = chat.native;
  if (native?.format === 'openai-responses') {
    const asked = native.body.max_output_tokens;
    const max_output_tokens = Math.min(typeof asked === 'number' ? asked : Number.POSITIVE_INFINITY, cap);
    chat.native = { ...native, body: { ...native.body, max_output_tokens } };
  } else if (native && typeof native.body.max_tokens === 'number') {
    chat.native = { ...native, body: { ...native.body, max_tokens: Math.min(native.body.max_tokens, cap) } };
  }
}

/**
 * What a request reserves: a chat its prompt (messages, tools, images) and
 * its completion allowance at the dearest target's price; embeddings their
 * input; a media request its dearest target's cost, all or nothing.
 */
export function budgetRequestOf(
  rt: { prices: PriceTable; completionAllowance: number },
  caller: Caller,
  request: AccountedRequest,
  at: number,
): BudgetRequest {
  const chat = request.chat;
  const targets = chat?.targets ?? request.targets ?? [];
  return {
    userId: caller.userId,
    apiKeyId: caller.apiKeyId,
    projectId: request.projectId,
    keyRules: caller.keyRules,
    promptTokens: chat ? estimateChatPrompt(chat) : (request.inputTokens ?? 0),
    completionTokens: chat ? completionAllowanceOf(chat, rt.completionAllowance) : 0,
    price: dearestPrice(rt, targets, at),
    ...(request.media ? { fixedCostMicros: dearestMediaCost(rt, targets, request.media, at) } : {}),
  };
}

/**
 * A request's reservations as one: the first and those of its continuations.
 * Settling replaces the first by the actual use and gives the others back.
 */
export function combinedReservation(first: Reservation): Reservation & { add(more: Reservation): void } {
  const more: Reservation[] = [];
  return {
    completionCap: first.completionCap,
    add: (r) => {
      more.push(r);
    },
    async settle(actual: BudgetActual) {
      if (more.length === 0) return first.settle(actual);
      const none = { totalTokens: 0, costMicros: 0 };
      await Promise.all([first.settle(actual), ...more.map((r) => r.settle(none))]);
    },
  };
}
