import { z } from 'zod';

/** A content part of an input message: `input_text`, `output_text`, `input_image`, `input_file`, ... */
const ZInputPart = z.looseObject({ type: z.string().max(64), text: z.string().optional() });

/**
 * An input item: a message (text or content parts), a function call the
 * model made, its output, or any other item type (reasoning, hosted tool
 * calls, ...), which is kept as sent.
 */
const ZResponsesInputItem = z.union([
  z.looseObject({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([z.string(), z.array(ZInputPart).max(4096)]),
  }),
  z.looseObject({
    type: z.literal('function_call'),
    call_id: z.string().max(256),
    name: z.string().max(256),
    arguments: z.string(),
  }),
  z.looseObject({
    type: z.literal('function_call_output'),
    call_id: z.string().max(256),
    output: z.union([z.string(), z.array(ZInputPart).max(4096)]),
  }),
  z.looseObject({ type: z.string().max(64) }),
]);
export type ResponsesInputItem = z.infer<typeof ZResponsesInputItem>;

/** A tool: a function (flat: `name` and `parameters` at the top) or any other type, kept as sent. */
const ZResponsesTool = z.looseObject({
  type: z.string().max(64),
  name: z.string().max(256).optional(),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

/**
 * `POST /v1/responses`, OpenAI's Responses format. Fields not named here are
 * accepted and passed on or dropped by the field policy
 * (docs/gateway-ai.md#field-policy).
 */
export const ZResponsesRequest = z
  .looseObject({
    model: z.string().min(1).max(512).meta({ example: 'free' }),
    input: z.union([z.string(), z.array(ZResponsesInputItem).max(4096)]).optional(),
    instructions: z.string().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    tools: z.array(ZResponsesTool).max(256).nullable().optional(),
    tool_choice: z
      .union([
        z.enum(['auto', 'none', 'required']),
        z.looseObject({ type: z.string(), name: z.string().optional() }),
      ])
      .nullable()
      .optional(),
    temperature: z.number().nullable().optional(),
    top_p: z.number().nullable().optional(),
    max_output_tokens: z.number().int().positive().nullable().optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    store: z.boolean().nullable().optional(),
    previous_response_id: z.string().max(256).nullable().optional(),
    metadata: z.record(z.string(), z.string()).nullable().optional(),
    user: z.string().max(256).nullable().optional(),
    reasoning: z
      .looseObject({ effort: z.string().nullable().optional(), summary: z.string().nullable().optional() })
      .nullable()
      .optional(),
    text: z
      .looseObject({
        format: z
          .looseObject({
            type: z.string(),
            name: z.string().optional(),
            schema: z.record(z.string(), z.unknown()).optional(),
            description: z.string().optional(),
            strict: z.boolean().nullable().optional(),
          })
          .nullable()
          .optional(),
      })
      .nullable()
      .optional(),
    include: z.array(z.string().max(128)).max(64).nullable().optional(),
    prompt_cache_key: z.string().max(1024).nullable().optional(),
  })
  .meta({ id: 'ResponsesRequest' });
export type ResponsesRequest = z.infer<typeof ZResponsesRequest>;

/** The answer of `POST /v1/responses` (the fields this gateway fills). */
export const ZResponsesResponse = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number().int(),
    status: z.enum(['completed', 'incomplete', 'failed', 'in_progress']),
    model: z.string(),
    output: z.array(z.looseObject({ type: z.string() })),
    usage: z
      .looseObject({
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        total_tokens: z.number().int(),
      })
      .nullable(),
  })
  .meta({ id: 'ResponsesResponse' });
export type ResponsesResponse = z.infer<typeof ZResponsesResponse>;
