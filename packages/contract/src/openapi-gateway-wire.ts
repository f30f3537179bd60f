import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { ERROR_CODES, type ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import { EXAMPLE_REQUEST_ID } from './common';
import {
  ZAnthropicCountTokensRequest,
  ZAnthropicCountTokensResponse,
  ZAnthropicErrorBody,
  ZAnthropicMessageResponse,
  ZAnthropicMessagesRequest,
} from './gateway-anthropic';
import { ZEmbeddingsRequest, ZEmbeddingsResponse } from './gateway-embeddings';
import { ZResponsesRequest, ZResponsesResponse } from './gateway-responses';
import { groupErrorResponses } from './openapi-errors';
import { CHAT_ERRORS, OPENAI_TAG, openAiErrorResponses, security } from './openapi-gateway-openai';
import { jsonBody } from './openapi-shared';

/** Tag of Anthropic's Messages API on the gateway. */
export const ANTHROPIC_TAG = {
  name: 'Anthropic-compatible',
  description:
    "Anthropic's Messages format on the same lanes, keys, limits and fallback: point an Anthropic SDK or Claude Code at `<gateway>` with a gateway API key.",
};

const projectHeader = z.object({
  'X-Project-Id': z
    .string()
    .optional()
    .meta({ description: 'Project for usage records, 1 to 128 characters; default `default`.' }),
});

function anthropicType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'overloaded_error';
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

function anthropicErrorResponses(codes: readonly ErrorCode[]): Record<string, ResponseConfig> {
  return groupErrorResponses(codes, {
    schema: ZAnthropicErrorBody,
    descriptions: {},
    // As Anthropic answers them: a body of the wrong shape is 400, not our 422 (messages/errors.ts).
    status: (code) => (ERROR_CODES[code].status === 422 ? 400 : ERROR_CODES[code].status),
    example: (code, status) => {
      const message = ERROR_CODES[code].error;
      return {
        summary: message,
        value: {
          type: 'error',
          error: { type: anthropicType(status), message },
          request_id: EXAMPLE_REQUEST_ID,
        },
      };
    },
  });
}

const sse = (description: string) => ({ schema: { type: 'string' as const, description } });

/** Registers `POST /v1/messages`, `POST /v1/responses` and `POST /v1/embeddings` (docs/gateway-ai.md). */
export function registerWirePaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/messages',
    operationId: 'anthropicCreateMessage',
    summary: "Message in Anthropic's Messages format (plain or streamed)",
    description: [
      "Anthropic's Messages format; the key as `x-api-key` or `Authorization: Bearer`. `model` is a lane or `<lane>/<model>` as on `/v1/chat/completions`.",
      'Anthropic targets get the request as sent, byte for byte but `model` (cache_control, thinking, `role: "system"` turns, fields this gateway does not know, the `anthropic-beta` header) and their answer goes back as it came; OpenAI-compatible targets get a translation, and what it cannot carry (top_k, thinking, cache_control, server tools, documents) is dropped and named in the `x-gateway-dropped-params` response header, never refused (docs/gateway-ai.md#field-policy).',
      "With `stream: true`: `message_start`, `ping`, `content_block_start`/`content_block_delta`/`content_block_stop`, `message_delta`, `message_stop`; a failure after the start ends with an `error` event. Errors are in Anthropic's shape with our `request_id`.",
    ].join('\n\n'),
    tags: [ANTHROPIC_TAG.name],
    security,
    request: {
      headers: projectHeader.extend({ 'anthropic-beta': z.string().optional() }),
      body: jsonBody(ZAnthropicMessagesRequest),
    },
    responses: {
      200: {
        description: "The message, or with `stream: true` Anthropic's event stream.",
        content: {
          'application/json': { schema: ZAnthropicMessageResponse },
          'text/event-stream': sse('Server-sent events named by their `type`.'),
        },
      },
      ...anthropicErrorResponses(CHAT_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/messages/count_tokens',
    operationId: 'anthropicCountTokens',
    summary: "Input tokens of a Messages request (Anthropic's count_tokens)",
    description:
      "An Anthropic target's count from the provider's own `count_tokens` endpoint (`x-gateway-token-count: provider`); for a model on OpenAI-compatible targets the gateway's tokenizer over the translated request (`x-gateway-token-count: estimate`). Not charged, not recorded; the key's rate limit applies.",
    tags: [ANTHROPIC_TAG.name],
    security,
    request: { body: jsonBody(ZAnthropicCountTokensRequest) },
    responses: {
      200: {
        description: 'The count.',
        content: { 'application/json': { schema: ZAnthropicCountTokensResponse } },
      },
      ...anthropicErrorResponses(CHAT_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/responses',
    operationId: 'openAiCreateResponse',
    summary: "Response in OpenAI's Responses format (plain or streamed), stateless",
    description: [
      "Text or item input, `instructions`, function tools and their outputs, translated to the lane's targets. Nothing is stored: `previous_response_id` and `store: true` are 400 `unsupported_parameter`, as are tool types other than `function` and unknown fields.",
      'With `stream: true`: `response.created`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`/`.done`, `response.function_call_arguments.delta`/`.done`, `response.content_part.done`, `response.output_item.done`, `response.completed` (or `response.incomplete` at the token limit), each with `sequence_number`; a failure after the start ends with an `error` event.',
    ].join('\n\n'),
    tags: [OPENAI_TAG.name],
    security,
    request: { headers: projectHeader, body: jsonBody(ZResponsesRequest) },
    responses: {
      200: {
        description: 'The response, or with `stream: true` its event stream.',
        content: {
          'application/json': { schema: ZResponsesResponse },
          'text/event-stream': sse('Server-sent Responses events named by their `type`.'),
        },
      },
      ...openAiErrorResponses(CHAT_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/embeddings',
    operationId: 'openAiCreateEmbeddings',
    summary: 'Embeddings on a lane with embedding models',
    description:
      '`model` is a lane with `embedding_targets` or `<lane>/<model>`; fallback along the targets as for chat. Vectors as floats, or base64 with `encoding_format: base64`.',
    tags: [OPENAI_TAG.name],
    security,
    request: { headers: projectHeader, body: jsonBody(ZEmbeddingsRequest) },
    responses: {
      200: {
        description: 'One vector per input.',
        content: { 'application/json': { schema: ZEmbeddingsResponse } },
      },
      ...openAiErrorResponses([
        'missing_api_key',
        'invalid_api_key',
        'deserialization_error',
        'model_not_found',
        'rate_limited',
        'upstream_rejected',
        'upstream_error',
        'upstream_unavailable',
        'upstream_timeout',
      ]),
    },
  });
}
