import type { ErrorCode } from '@platform/errors/codes';
import { exceedsCodePoints, MAX_PROJECT_ID_LENGTH } from './gateway-common';

/** Limits of a chat completion request (spec "Limits" table plus our max_tokens ceiling). */
export const CHAT_LIMITS = Object.freeze({
  maxMessages: 128,
  /** Per message, in UTF-8 bytes of `content`. */
  maxMessageBytes: 64 * 1024,
  /** All messages together, in UTF-8 bytes of `content`. */
  maxTotalBytes: 8 * 1024 * 1024,
  maxProjectIdLength: MAX_PROJECT_ID_LENGTH,
  defaultMaxTokens: 4096,
  /** Largest context window among the offered models; larger values can only fail upstream. */
  maxMaxTokens: 131_072,
  minTemperature: 0,
  maxTemperature: 2,
});

/**
 * The chat rules in the order the route applies them; the first failing one is
 * the answer. The order follows the spec's error table (lane, messages, sizes,
 * project_id, count, lane membership) and ends with the ranges we added.
 */
export const CHAT_RULE_CODES = [
  'lane_required',
  'messages_empty',
  'message_too_long',
  'total_content_too_long',
  'project_id_required',
  'project_id_too_long',
  'too_many_messages',
  'unknown_lane',
  'max_tokens_too_large',
  'temperature_out_of_range',
] as const satisfies readonly ErrorCode[];

/** An error code `checkChatRules` can return. */
export type ChatRuleViolation = (typeof CHAT_RULE_CODES)[number];

/** What the rules read; a request that passed `ZChatCompletionRequestShape` fits. */
export type ChatRuleInput = {
  lane?: string | undefined;
  project_id: string;
  messages: readonly { content: string }[];
  max_tokens?: number | undefined;
  temperature?: number | undefined;
};

type LaneList = ReadonlySet<string> | readonly string[];

function hasLane(lanes: LaneList, lane: string): boolean {
  return Array.isArray(lanes) ? lanes.includes(lane) : (lanes as ReadonlySet<string>).has(lane);
}

/** Per-message and total byte checks in one pass; a too-long message outranks the total. */
function checkContentSizes(messages: ChatRuleInput['messages']): ChatRuleViolation | null {
  let total = 0;
  for (const message of messages) {
    const bytes = Buffer.byteLength(message.content, 'utf8');
    if (bytes > CHAT_LIMITS.maxMessageBytes) return 'message_too_long';
    total += bytes;
  }
  return total > CHAT_LIMITS.maxTotalBytes ? 'total_content_too_long' : null;
}

/** Shared by `checkChatRules` and the documented schema; `undefined` lanes skips the membership rule. */
export function findChatRuleViolation(
  req: ChatRuleInput,
  allowedLanes: LaneList | undefined,
): ChatRuleViolation | null {
  if (req.lane === undefined || req.lane === '') return 'lane_required';
  if (req.messages.length === 0) return 'messages_empty';
  const sizes = checkContentSizes(req.messages);
  if (sizes) return sizes;
  if (req.project_id === '') return 'project_id_required';
  if (exceedsCodePoints(req.project_id, CHAT_LIMITS.maxProjectIdLength)) return 'project_id_too_long';
  if (req.messages.length > CHAT_LIMITS.maxMessages) return 'too_many_messages';
  if (allowedLanes && !hasLane(allowedLanes, req.lane)) return 'unknown_lane';
  if (req.max_tokens !== undefined && req.max_tokens > CHAT_LIMITS.maxMaxTokens)
    return 'max_tokens_too_large';
  const t = req.temperature;
  if (t !== undefined && (t < CHAT_LIMITS.minTemperature || t > CHAT_LIMITS.maxTemperature)) {
    return 'temperature_out_of_range';
  }
  return null;
}

/**
 * Applies the chat rules to a request that passed `ZChatCompletionRequestShape`
 * and returns the error code of the first broken rule, or null. Byte sizes are
 * UTF-8 lengths computed without copying the content.
 */
export function checkChatRules(req: ChatRuleInput, allowedLanes: LaneList): ChatRuleViolation | null {
  return findChatRuleViolation(req, allowedLanes);
}
