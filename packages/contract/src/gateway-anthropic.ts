import { z } from 'zod';

/**
 * One content block of Anthropic's Messages format. Only `type` is checked
 * here: blocks go to an Anthropic target as sent (cache_control, thinking
 * signatures and citations included); the translation to an
 * OpenAI-compatible target decides which types it can carry.
 */
const ZAnthropicBlock = z.looseObject({ type: z.string().min(1).max(64) });

const ZAnthropicContent = z.union([z.string(), z.array(ZAnthropicBlock).max(4096)]);

/**
 * A message of `POST /v1/messages`: `user` or `assistant`, text or content
 * blocks, or a `system` turn (Claude Code sends system instructions mid
 * conversation for models it does not know, and Anthropic's API takes them).
 */
export const ZAnthropicMessage = z
  .looseObject({ role: z.enum(['user', 'assistant', 'system']), content: ZAnthropicContent })
  .meta({ id: 'AnthropicMessage' });
export type AnthropicMessage = z.infer<typeof ZAnthropicMessage>;

const ZAnthropicTool = z.looseObject({
  name: z.string().min(1).max(256),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  type: z.string().optional(),
  strict: z.boolean().optional(),
});

/**
 * `POST /v1/messages`, Anthropic's request format. `model` is a lane or
 * `<lane>/<model>` as on `/v1/chat/completions`. Fields this schema does not
 * name are kept and passed to Anthropic targets (Claude Code sends several).
 */
export const ZAnthropicMessagesRequest = z
  .looseObject({
    model: z.string().min(1).max(512).meta({ example: 'premium' }),
    max_tokens: z.number().int().positive(),
    /** Up to 10,000 (agent sessions are long); the 8 MiB content total applies. */
    messages: z.array(ZAnthropicMessage).max(10_000),
    system: z.union([z.string(), z.array(ZAnthropicBlock).max(4096)]).optional(),
    stream: z.boolean().optional(),
    stop_sequences: z.array(z.string()).max(16).optional(),
    /** Anthropic's range (0..1), not OpenAI's. */
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().optional(),
    top_k: z.number().int().optional(),
    tools: z.array(ZAnthropicTool).max(512).optional(),
    tool_choice: z
      .looseObject({
        type: z.enum(['auto', 'any', 'tool', 'none']),
        name: z.string().optional(),
        disable_parallel_tool_use: z.boolean().optional(),
      })
      .optional(),
    thinking: z.looseObject({ type: z.string() }).optional(),
    metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  })
  .meta({ id: 'AnthropicMessagesRequest' });
export type AnthropicMessagesRequest = z.infer<typeof ZAnthropicMessagesRequest>;

/** Anthropic's usage: `input_tokens` excludes the cache reads and writes counted beside it. */
export const ZAnthropicUsage = z
  .object({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cache_creation_input_tokens: z.number().int().nullable(),
    cache_read_input_tokens: z.number().int().nullable(),
  })
  .meta({ id: 'AnthropicUsage' });
export type AnthropicUsage = z.infer<typeof ZAnthropicUsage>;

/** The answer of `POST /v1/messages` without `stream`. */
export const ZAnthropicMessageResponse = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(ZAnthropicBlock),
    stop_reason: z.string().nullable(),
    stop_sequence: z.string().nullable(),
    usage: ZAnthropicUsage,
  })
  .meta({ id: 'AnthropicMessageResponse' });
export type AnthropicMessageResponse = z.infer<typeof ZAnthropicMessageResponse>;

/** Anthropic's error envelope, which its SDKs read; `request_id` is ours (also in `x-request-id`). */
export const ZAnthropicErrorBody = z
  .object({
    type: z.literal('error'),
    error: z.object({ type: z.string(), message: z.string() }),
    request_id: z.string(),
  })
  .meta({ id: 'AnthropicError' });
export type AnthropicErrorBody = z.infer<typeof ZAnthropicErrorBody>;

/**
 * `POST /v1/messages/count_tokens`: a Messages request without `max_tokens`
 * (a client may still send it; it is ignored like any field the count does not use).
 */
export const ZAnthropicCountTokensRequest = ZAnthropicMessagesRequest.extend({
  max_tokens: z.number().int().positive().optional(),
}).meta({ id: 'AnthropicCountTokensRequest' });
export type AnthropicCountTokensRequest = z.infer<typeof ZAnthropicCountTokensRequest>;

/** The count: the provider's for an Anthropic target, else our tokenizer's (`x-gateway-token-count: estimate`). */
export const ZAnthropicCountTokensResponse = z
  .looseObject({ input_tokens: z.number().int().nonnegative() })
  .meta({ id: 'AnthropicCountTokensResponse' });
export type AnthropicCountTokensResponse = z.infer<typeof ZAnthropicCountTokensResponse>;

/** One model in Anthropic's Models API shape (`GET /v1/models` with `anthropic-version`). */
export const ZAnthropicModel = z
  .object({
    type: z.literal('model'),
    id: z.string(),
    display_name: z.string(),
    /** RFC 3339; unknown for a lane, so the epoch. */
    created_at: z.string(),
    /** Fields of Anthropic's current ModelInfo the gateway does not know for a lane: null (`lifecycle` active). */
    capabilities: z.null(),
    deprecated_at: z.null(),
    lifecycle: z.literal('active'),
    line: z.null(),
    max_input_tokens: z.null(),
    max_tokens: z.null(),
    retires_at: z.null(),
  })
  .meta({ id: 'AnthropicModel' });
export type AnthropicModel = z.infer<typeof ZAnthropicModel>;

/** A page of Anthropic's model list (`limit`, `after_id`, `before_id`). */
export const ZAnthropicModelList = z
  .object({
    data: z.array(ZAnthropicModel),
    has_more: z.boolean(),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
  })
  .meta({ id: 'AnthropicModelList' });
export type AnthropicModelList = z.infer<typeof ZAnthropicModelList>;
