import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { ERROR_CODES, type ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import { CHAT_RULE_CODES } from './chat-rules';
import {
  ZOpenAiChatCompletion,
  ZOpenAiChatCompletionChunk,
  ZOpenAiChatRequest,
  ZOpenAiErrorBody,
  ZOpenAiModel,
  ZOpenAiModelList,
} from './gateway-openai';
import { groupErrorResponses } from './openapi-errors';
import { jsonBody, jsonResponse } from './openapi-shared';

/** Tag of the OpenAI-compatible operations. */
export const OPENAI_TAG = {
  name: 'OpenAI-compatible',
  description:
    'OpenAI wire format on the same lanes, keys, limits and fallback: point any OpenAI SDK at `<gateway>/v1` with a gateway API key.',
};

/** `Authorization: Bearer <key>` as OpenAI's SDKs send it, or `x-api-key`. */
export const security: Record<string, string[]>[] = [{ BearerAuth: [] }, { ApiKeyAuth: [] }];

/** OpenAI's `code` where it differs from ours (see apps/gateway/src/openai-compat/errors.ts). */
const OPENAI_CODE_NAMES: Partial<Record<ErrorCode, string>> = { rate_limited: 'rate_limit_exceeded' };

function typeOf(status: number): string {
  if (status === 403) return 'permission_error';
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

const EXAMPLE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  model_not_found: 'The model `gpt-4o` does not exist or you do not have access to it.',
  unsupported_parameter: 'Unrecognized request argument supplied: logit_bias',
  not_found: 'Invalid URL (POST /v1/audio/transcriptions)',
  deserialization_error: 'deserialization error: messages.0.content: Invalid input',
};

const STATUS_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'A field breaks a rule, a parameter is not supported, or the provider refused the request.',
  401: 'Missing, unknown or revoked API key.',
  404: 'Unknown model (or a lane the key may not use), or unknown path.',
  413: 'The body is too large.',
  422: 'The body is not valid JSON or a field has the wrong type.',
  429: 'Too many requests or daily token budget spent; wait as Retry-After says.',
  500: 'Internal error; report the x-request-id header.',
  502: 'The provider failed.',
  503: 'No provider available.',
  504: 'The provider did not answer in time.',
};

/** Error responses in OpenAI's shape, grouped by status, one example per code. */
export function openAiErrorResponses(codes: readonly ErrorCode[]): Record<string, ResponseConfig> {
  return groupErrorResponses(codes, {
    schema: ZOpenAiErrorBody,
    descriptions: STATUS_DESCRIPTIONS,
    example: (code, status) => {
      const message = EXAMPLE_MESSAGES[code] ?? ERROR_CODES[code].error;
      const param = code === 'unsupported_parameter' ? 'logit_bias' : null;
      const error = { message, type: typeOf(status), param, code: OPENAI_CODE_NAMES[code] ?? code };
      return { summary: message, value: { error } };
    },
  });
}

const AUTH_ERRORS: readonly ErrorCode[] = ['missing_api_key', 'invalid_api_key', 'internal'];
export const CHAT_ERRORS: readonly ErrorCode[] = [
  // The lane comes from `model`, so the two lane rules answer as model_not_found.
  ...CHAT_RULE_CODES.filter((c) => c !== 'lane_required' && c !== 'unknown_lane'),
  ...AUTH_ERRORS,
  'unsupported_parameter',
  'validation_failed',
  'deserialization_error',
  'payload_too_large',
  'model_not_found',
  'upstream_rejected',
  'upstream_content_policy',
  'upstream_context_length',
  'rate_limited',
  'request_exceeds_budget',
  'upstream_error',
  'upstream_unavailable',
  'upstream_timeout',
];

const CHAT_DESCRIPTION = [
  "OpenAI's chat completions format. `model` is a lane (`free`: its default model first, falling back along the lane) or `<lane>/<model>` (`free/llama-3.3-70b-versatile`: the targets serving that model). An unknown model, a model the lane does not offer and a lane not allowed are 404 `model_not_found`.",
  'The project for usage records comes from the `X-Project-Id` header (default `default`). The native chat rules apply: 1 to 128 messages, 64 KiB per message, 8 MiB in all, max_tokens / max_completion_tokens at most 131072, temperature 0..2.',
  '`temperature`, `top_p`, `max_tokens`, `max_completion_tokens`, `stop`, `seed`, `user`, `response_format`, `tools` and `tool_choice` are passed to the provider as sent; targets whose provider is configured as refusing a used parameter are skipped, and when none is left the answer is 400 `unsupported_parameter`. Any other field is 400 `unsupported_parameter` (`Unrecognized request argument supplied`).',
  'With `stream: true` the answer is `text/event-stream`: `data: {OpenAiChatCompletionChunk}` events, with `stream_options.include_usage` a last chunk with empty `choices` and `usage`, then `data: [DONE]`. Errors before the first chunk (fallback included) are JSON as listed; a failure after it ends the stream with `data: {OpenAiErrorBody}` and no `[DONE]`.',
  'The request id is in the `x-request-id` response header; the completion id is `chatcmpl-<request id>`.',
].join('\n\n');

/** Registers `POST /v1/chat/completions`, `GET /v1/models` and `GET /v1/models/{model}`. */
export function registerOpenAiPaths(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', 'BearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A gateway API key as `Authorization: Bearer <key>` (what OpenAI SDKs send); `/v1` only.',
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/chat/completions',
    operationId: 'openAiCreateChatCompletion',
    summary: 'Chat completion in OpenAI format (plain or streamed)',
    description: CHAT_DESCRIPTION,
    tags: [OPENAI_TAG.name],
    security,
    request: {
      headers: z.object({
        'X-Project-Id': z
          .string()
          .optional()
          .meta({ description: 'Project for usage records, 1 to 128 characters; default `default`.' }),
      }),
      body: jsonBody(ZOpenAiChatRequest),
    },
    responses: {
      200: {
        description:
          'The completion, or with `stream: true` an event stream of chunks ending with `data: [DONE]`.',
        content: {
          'application/json': { schema: ZOpenAiChatCompletion },
          'text/event-stream': {
            schema: {
              type: 'string',
              description: 'Server-sent `data:` events of OpenAiChatCompletionChunk.',
            },
          },
        },
      },
      ...openAiErrorResponses(CHAT_ERRORS),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/models',
    operationId: 'openAiListModels',
    summary: 'Models in OpenAI list format: every allowed lane and its `<lane>/<model>` ids',
    tags: [OPENAI_TAG.name],
    security,
    responses: {
      200: jsonResponse('The model ids `model` accepts.', ZOpenAiModelList),
      ...openAiErrorResponses(AUTH_ERRORS),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/models/{model}',
    operationId: 'openAiRetrieveModel',
    summary: 'One model id (a lane or `<lane>/<model>`; the slash need not be encoded)',
    tags: [OPENAI_TAG.name],
    security,
    request: { params: z.object({ model: z.string().meta({ example: 'free/llama-3.3-70b-versatile' }) }) },
    responses: {
      200: jsonResponse('The model.', ZOpenAiModel),
      ...openAiErrorResponses([...AUTH_ERRORS, 'model_not_found']),
    },
  });
}

/** Schemas named only in descriptions (stream chunks), listed so they appear as components. */
export const OPENAI_EXTRA_SCHEMAS = [ZOpenAiChatCompletionChunk];
