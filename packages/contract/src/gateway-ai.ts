import { ERROR_CODES } from '@platform/errors/codes';
import { z } from 'zod';
import { CHAT_LIMITS, findChatRuleViolation } from './chat-rules';
import { ZRequestId } from './common';
import { storableText, TOKEN_COUNT_FIELDS, ZLaneName, ZModelName, ZProjectId } from './gateway-common';

/** Roles a chat message may have. */
export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;
export const ZChatRole = z.enum(CHAT_ROLES);
export type ChatRole = z.infer<typeof ZChatRole>;

/** One chat message. Content is limited to 64 KiB of UTF-8 (checked by the rules, not by this schema). */
export const ZChatMessage = z
  .object({
    role: ZChatRole,
    content: z
      .string()
      .meta({ description: 'At most 65536 bytes of UTF-8; all messages together at most 8 MiB.' }),
  })
  .meta({ id: 'ChatMessage' });
export type ChatMessage = z.infer<typeof ZChatMessage>;

/**
 * Types-only schema of a chat request. A failure here is a malformed body
 * (422 deserialization error): project_id absent, a wrong type, an unknown
 * role. `lane` may be absent so that the rules can answer 400 lane is required;
 * every value rule is in `checkChatRules`, which runs after this.
 */
export const ZChatCompletionRequestShape = z.object({
  lane: z.string().optional(),
  // Checked with the shape: text Postgres cannot store is 400 validation failed, never a record.
  project_id: storableText(z.string()),
  messages: z.array(ZChatMessage),
  model: z.string().optional(),
  max_tokens: z.number().int().positive().default(CHAT_LIMITS.defaultMaxTokens),
  temperature: z.number().optional(),
});
/** A chat request that has the right shape; the rules may still reject it. */
export type ChatCompletionRequest = z.infer<typeof ZChatCompletionRequestShape>;

/**
 * The chat request with every rule except lane membership, for the OpenAPI
 * document and for clients that check before sending. Routes use the shape
 * plus `checkChatRules` because the spec fixes which error comes first.
 */
export const ZChatCompletionRequest = z
  .object({
    lane: ZLaneName,
    project_id: ZProjectId,
    messages: z.array(ZChatMessage).min(1).max(CHAT_LIMITS.maxMessages),
    model: ZModelName.optional(),
    max_tokens: z
      .number()
      .int()
      .min(1)
      .max(CHAT_LIMITS.maxMaxTokens)
      .default(CHAT_LIMITS.defaultMaxTokens)
      .meta({ description: 'Upper bound of generated tokens.' }),
    temperature: z.number().min(0).max(2).optional(),
  })
  .superRefine((req, ctx) => {
    const code = findChatRuleViolation(req, undefined);
    if (code === 'message_too_long' || code === 'total_content_too_long') {
      ctx.addIssue({ code: 'custom', path: ['messages'], message: ERROR_CODES[code].error });
    }
  })
  .meta({ id: 'ChatCompletionRequest' });
export type ChatCompletionInput = z.input<typeof ZChatCompletionRequest>;

/** Token counts of one completion. */
export const ZChatUsage = z.object(TOKEN_COUNT_FIELDS).meta({ id: 'ChatUsage' });
export type ChatUsage = z.infer<typeof ZChatUsage>;

/** `POST /api/v1/ai/chat/completions` 200. */
export const ZChatCompletionResponse = z
  .object({
    content: z.string().meta({ description: 'Generated text.' }),
    model_used: z.string().meta({ example: 'llama-3.3-70b' }),
    finish_reason: z
      .string()
      .meta({ description: 'Why generation ended, e.g. stop or length.', example: 'stop' }),
    usage: ZChatUsage,
  })
  .meta({ id: 'ChatCompletionResponse' });
export type ChatCompletionResponse = z.infer<typeof ZChatCompletionResponse>;

/** Names of the server-sent events of `POST /api/v1/ai/chat/stream`. */
export const STREAM_EVENTS = { chunk: 'chunk', done: 'done', error: 'error' } as const;

/** `event: chunk`: the next piece of generated text. */
export const ZStreamChunkEvent = z.object({ content: z.string() }).meta({ id: 'StreamChunkEvent' });
export type StreamChunkEvent = z.infer<typeof ZStreamChunkEvent>;

/** `event: done`: the last event of a successful stream. */
export const ZStreamDoneEvent = z
  .object({ model_used: z.string(), finish_reason: z.string(), usage: ZChatUsage })
  .meta({ id: 'StreamDoneEvent' });
export type StreamDoneEvent = z.infer<typeof ZStreamDoneEvent>;

/** `event: error`: the stream failed after it had started; it is the last event. */
export const ZStreamErrorEvent = z
  .object({ error: z.string().meta({ example: 'upstream AI service timed out' }), request_id: ZRequestId })
  .meta({ id: 'StreamErrorEvent' });
export type StreamErrorEvent = z.infer<typeof ZStreamErrorEvent>;
