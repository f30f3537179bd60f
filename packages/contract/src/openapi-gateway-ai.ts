import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { CHAT_RULE_CODES } from './chat-rules';
import { ZChatCompletionRequest, ZChatCompletionResponse } from './gateway-ai';
import {
  MEDIA_AUDIO_CONTENT_TYPES,
  MPEG_AUDIO_CONTENT_TYPE,
  ZImageRequest,
  ZImageResponse,
  ZMusicRequest,
  ZSoundFxRequest,
  ZTtsRequest,
} from './gateway-media';
import { buildErrorResponses } from './openapi-errors';
import { jsonBody, jsonResponse } from './openapi-shared';

const security = [{ ApiKeyAuth: [] }];
const TAG = 'AI';

/** Errors of every AI call: key checks, body parsing, limits and the provider. */
const AI_ERRORS: readonly ErrorCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'deserialization_error',
  'payload_too_large',
  'unsupported_media_type',
  'unknown_lane',
  'unknown_model',
  'upstream_rejected',
  'upstream_content_policy',
  'upstream_context_length',
  'rate_limited',
  // Larger than a budget's whole window (no Retry-After: a retry cannot help).
  'request_exceeds_budget',
  // A paid lane (lanes config `billing.mode: paid`) without an active subscription; 503 when payment cannot say.
  'subscription_required',
  'service_unavailable',
  'internal',
  'upstream_error',
  'upstream_unavailable',
  'upstream_timeout',
];
const CHAT_ERRORS: readonly ErrorCode[] = [...CHAT_RULE_CODES, ...AI_ERRORS];
const MEDIA_ERRORS: readonly ErrorCode[] = ['validation_failed', ...AI_ERRORS];

const STREAM_DESCRIPTION = [
  'Same request as chat completions; the answer is a server-sent event stream (`text/event-stream`).',
  'Authentication and request errors are answered before the stream starts, as JSON `ErrorBody` with the statuses listed here.',
  'After the 200 the stream carries these events, each `data` line one JSON object:',
  '- `event: chunk`, data `StreamChunkEvent` `{"content": "..."}`: the next piece of text, zero or more times;',
  '- `event: done`, data `StreamDoneEvent` `{"model_used", "finish_reason", "usage"}`: the last event of a successful stream;',
  '- `event: error`, data `StreamErrorEvent` `{"error", "request_id"}`: the last event when the provider fails or times out mid-stream (e.g. `upstream AI service timed out`).',
  'A client that disconnects cancels the upstream request.',
].join('\n');

const binary = { type: 'string', format: 'binary' } as const;

function audioResponse(description: string, contentTypes: readonly string[]): ResponseConfig {
  return {
    description,
    headers: {
      'X-Model-Used': {
        description: 'The model that produced the audio (the JSON endpoints return it as model_used).',
        schema: { type: 'string' },
      },
    },
    content: Object.fromEntries(contentTypes.map((t) => [t, { schema: binary }])),
  };
}

/** Registers the six AI endpoints of the gateway. */
export function registerAiPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/ai/chat/completions',
    operationId: 'createChatCompletion',
    summary: 'Chat completion on a lane',
    description:
      'Rules are checked in this order and the first broken one is answered: lane, messages empty, message size, total size, project_id, message count, lane membership. An omitted project_id or a wrong type is 422 deserialization error.',
    tags: [TAG],
    security,
    request: { body: jsonBody(ZChatCompletionRequest) },
    responses: {
      200: jsonResponse('Generated content.', ZChatCompletionResponse),
      ...buildErrorResponses(CHAT_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/ai/chat/stream',
    operationId: 'streamChatCompletion',
    summary: 'Streaming chat completion (server-sent events)',
    description: STREAM_DESCRIPTION,
    tags: [TAG],
    security,
    request: { body: jsonBody(ZChatCompletionRequest) },
    responses: {
      200: {
        description: 'Event stream: chunk events, then done or error.',
        content: { 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events.' } } },
      },
      ...buildErrorResponses(CHAT_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/ai/image',
    operationId: 'createImage',
    summary: 'Image generation',
    tags: [TAG],
    security,
    request: { body: jsonBody(ZImageRequest) },
    responses: {
      200: jsonResponse('Generated images.', ZImageResponse),
      ...buildErrorResponses(MEDIA_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/ai/tts',
    operationId: 'createSpeech',
    summary: 'Text to speech',
    description: 'Answers with the audio bytes; Content-Type follows `format` (mp3 is audio/mpeg).',
    tags: [TAG],
    security,
    request: { body: jsonBody(ZTtsRequest) },
    responses: {
      200: audioResponse('Spoken audio.', [...new Set(Object.values(MEDIA_AUDIO_CONTENT_TYPES))]),
      ...buildErrorResponses(MEDIA_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/ai/music',
    operationId: 'createMusic',
    summary: 'Music generation',
    tags: [TAG],
    security,
    request: { body: jsonBody(ZMusicRequest) },
    responses: {
      200: audioResponse('Generated music.', [MPEG_AUDIO_CONTENT_TYPE]),
      ...buildErrorResponses(MEDIA_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/ai/soundfx',
    operationId: 'createSoundEffect',
    summary: 'Sound effect generation',
    tags: [TAG],
    security,
    request: { body: jsonBody(ZSoundFxRequest) },
    responses: {
      200: audioResponse('Generated sound effect.', [MPEG_AUDIO_CONTENT_TYPE]),
      ...buildErrorResponses(MEDIA_ERRORS),
    },
  });
}
