import { z } from 'zod';
import { TOKEN_COUNT_FIELDS } from './gateway-common';

/** The `X-Project-Id` value used when the header is absent. */
export const OPENAI_DEFAULT_PROJECT_ID = 'default';

/** A content part: text, image, audio, file, ... (only `text` parts count towards the size rules). */
const ZContentPart = z.looseObject({ type: z.string().max(64), text: z.string().optional() });
/** Plain text, or OpenAI's array of content parts. */
const ZContent = z.union([z.string(), z.array(ZContentPart).max(4096)]);
const ZToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
const ZName = z.string().max(256).optional();

/**
 * One message in OpenAI's format: system, developer, user, assistant (may
 * carry tool calls), tool or the deprecated function. Fields not named here
 * (`audio`, `function_call`, ...) are kept and passed on.
 */
export const ZOpenAiMessage = z
  .discriminatedUnion('role', [
    z.looseObject({ role: z.literal('system'), content: ZContent, name: ZName }),
    z.looseObject({ role: z.literal('developer'), content: ZContent, name: ZName }),
    z.looseObject({ role: z.literal('user'), content: ZContent, name: ZName }),
    z.looseObject({
      role: z.literal('assistant'),
      content: ZContent.nullable().optional(),
      name: ZName,
      refusal: z.string().nullable().optional(),
      tool_calls: z.array(ZToolCall).max(128).optional(),
    }),
    z.looseObject({ role: z.literal('tool'), content: ZContent, tool_call_id: z.string().max(256) }),
    z.looseObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string().max(256) }),
  ])
  .meta({ id: 'OpenAiMessage' });
export type OpenAiMessage = z.infer<typeof ZOpenAiMessage>;

const ZMaxTokens = z.number().int().positive().nullable().optional();

/**
 * `POST /v1/chat/completions`, OpenAI's request format. `model` is a lane
 * (`free`) or a lane and one of its models (`free/llama-3.3-70b-versatile`).
 * The native chat rules (message count and sizes, max_tokens, temperature)
 * apply on top; `null` means the same as an absent field. Fields not named
 * here are accepted and passed on (the field policy).
 */
export const ZOpenAiChatRequest = z
  .looseObject({
    model: z.string().min(1).max(512).meta({
      description: 'A lane (its default model, with fallback along the lane) or `<lane>/<model>`.',
      example: 'free',
    }),
    messages: z.array(ZOpenAiMessage),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
    n: z.number().int().min(1).max(128).nullable().optional(),
    temperature: z.number().nullable().optional().meta({ description: '0 to 2.' }),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: ZMaxTokens.meta({ description: 'At most 131072.' }),
    max_completion_tokens: ZMaxTokens.meta({ description: 'At most 131072.' }),
    stop: z
      .union([z.string(), z.array(z.string()).max(4)])
      .nullable()
      .optional(),
    seed: z.number().int().nullable().optional(),
    user: z.string().max(256).nullable().optional(),
    response_format: z
      .looseObject({ type: z.enum(['text', 'json_object', 'json_schema']) })
      .nullable()
      .optional(),
    tools: z
      .array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }).optional() }))
      .max(128)
      .nullable()
      .optional(),
    tool_choice: z
      .union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })])
      .nullable()
      .optional(),
  })
  .meta({ id: 'OpenAiChatRequest' });
export type OpenAiChatRequest = z.infer<typeof ZOpenAiChatRequest>;

/**
 * OpenAI's token counts; the details as the provider reported them (cached
 * prompt tokens, reasoning tokens), absent when it reported none.
 */
export const ZOpenAiUsage = z
  .object({
    ...TOKEN_COUNT_FIELDS,
    prompt_tokens_details: z.looseObject({ cached_tokens: z.number().int().optional() }).optional(),
    completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().int().optional() }).optional(),
  })
  .meta({ id: 'OpenAiUsage' });

const ZOpenAiToolCallOut = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** `POST /v1/chat/completions` 200 without `stream`. */
export const ZOpenAiChatCompletion = z
  .object({
    id: z.string().meta({ example: 'chatcmpl-3f1c2a4e-8d6b-4c1e-9a57-0b6e2d8f4a10' }),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string().meta({
      description: '`<lane>/<model>` of the target that answered.',
      example: 'free/llama-3.3-70b-versatile',
    }),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.string().nullable().optional(),
          tool_calls: z.array(ZOpenAiToolCallOut).optional(),
        }),
        logprobs: z.null(),
        finish_reason: z.string().meta({ example: 'stop' }),
      }),
    ),
    usage: ZOpenAiUsage,
  })
  .meta({ id: 'OpenAiChatCompletion' });
export type OpenAiChatCompletion = z.infer<typeof ZOpenAiChatCompletion>;

/** One `data:` event of a streamed completion; the stream ends with `data: [DONE]`. */
export const ZOpenAiChatCompletionChunk = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        delta: z.object({
          role: z.literal('assistant').optional(),
          content: z.string().nullable().optional(),
          refusal: z.string().nullable().optional(),
          tool_calls: z.array(z.looseObject({ index: z.number().int() })).optional(),
        }),
        logprobs: z.null(),
        finish_reason: z.string().nullable(),
      }),
    ),
    usage: ZOpenAiUsage.nullable().optional().meta({
      description:
        'Only with `stream_options.include_usage`: null on every chunk but the last, whose `choices` is empty.',
    }),
  })
  .meta({ id: 'OpenAiChatCompletionChunk' });
export type OpenAiChatCompletionChunk = z.infer<typeof ZOpenAiChatCompletionChunk>;

/** One entry of `GET /v1/models`. */
export const ZOpenAiModel = z
  .object({
    id: z.string().meta({ example: 'free/llama-3.3-70b-versatile' }),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string().meta({ example: 'gateway' }),
  })
  .meta({ id: 'OpenAiModel' });
export type OpenAiModel = z.infer<typeof ZOpenAiModel>;

/** `GET /v1/models`: every allowed lane, then `<lane>/<model>` for each model the lane offers. */
export const ZOpenAiModelList = z
  .object({ object: z.literal('list'), data: z.array(ZOpenAiModel) })
  .meta({ id: 'OpenAiModelList' });
export type OpenAiModelList = z.infer<typeof ZOpenAiModelList>;

/** Every error under `/v1`, in OpenAI's shape; the request id is in the `x-request-id` header. */
export const ZOpenAiErrorBody = z
  .object({
    error: z.object({
      message: z
        .string()
        .meta({ example: 'The model `gpt-x` does not exist or you do not have access to it.' }),
      type: z.string().meta({ example: 'invalid_request_error' }),
      param: z.string().nullable(),
      code: z.string().nullable().meta({ example: 'model_not_found' }),
    }),
  })
  .meta({ id: 'OpenAiErrorBody' });
export type OpenAiErrorBody = z.infer<typeof ZOpenAiErrorBody>;
