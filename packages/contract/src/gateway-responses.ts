import { z } from 'zod';

/** Every top-level field `POST /v1/responses` understands; anything else is 400 `unsupported_parameter`. */
export const RESPONSES_REQUEST_FIELDS: readonly string[] = [
  'model',
  'input',
  'instructions',
  'stream',
  'tools',
  'tool_choice',
  'temperature',
  'top_p',
  'max_output_tokens',
  'parallel_tool_calls',
  'store',
  'previous_response_id',
  'metadata',
  'user',
];

const ZInputText = z.looseObject({ type: z.enum(['input_text', 'output_text']), text: z.string() });

/** An input item: a message (text or text parts), a function call the model made, or its output. */
const ZResponsesInputItem = z.union([
  z.looseObject({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([z.string(), z.array(ZInputText).max(4096)]),
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
    output: z.string(),
  }),
]);
export type ResponsesInputItem = z.infer<typeof ZResponsesInputItem>;

/** A function tool in the Responses format (flat: `name` and `parameters` at the top). */
const ZResponsesTool = z.looseObject({
  type: z.string(),
  name: z.string().max(256).optional(),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

/**
 * `POST /v1/responses`, OpenAI's Responses format, stateless: nothing is
 * stored, so `previous_response_id` and `store: true` are refused.
 */
export const ZResponsesRequest = z
  .object({
    model: z.string().min(1).max(512).meta({ example: 'free' }),
    input: z.union([z.string(), z.array(ZResponsesInputItem).max(1024)]),
    instructions: z.string().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    tools: z.array(ZResponsesTool).max(128).optional(),
    tool_choice: z
      .union([
        z.enum(['auto', 'none', 'required']),
        z.looseObject({ type: z.literal('function'), name: z.string() }),
      ])
      .optional(),
    temperature: z.number().nullable().optional(),
    top_p: z.number().nullable().optional(),
    max_output_tokens: z.number().int().positive().nullable().optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    store: z.boolean().nullable().optional(),
    previous_response_id: z.string().nullable().optional(),
    metadata: z.record(z.string(), z.string()).nullable().optional(),
    user: z.string().optional(),
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
