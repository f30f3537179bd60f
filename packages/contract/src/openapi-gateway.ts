import type { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { ZStreamChunkEvent, ZStreamDoneEvent, ZStreamErrorEvent } from './gateway-ai';
import { SESSION_COOKIE_NAME } from './gateway-auth';
import { ZGatewayConfigResponse } from './gateway-config';
import {
  ZListProviderKeysResponse,
  ZProviderKeyParams,
  ZStoredProviderKey,
  ZStoreProviderKeyRequest,
} from './gateway-keys';
import { buildErrorResponses } from './openapi-errors';
import { registerAiPaths } from './openapi-gateway-ai';
import { AUTH_TAGS, registerAuthPaths, SESSION_OR_API_KEY } from './openapi-gateway-auth';
import { MCP_TAG, registerMcpPaths } from './openapi-gateway-mcp';
import { OPENAI_EXTRA_SCHEMAS, OPENAI_TAG, registerOpenAiPaths } from './openapi-gateway-openai';
import { REQUEST_LOG_TAG, registerRequestLogPaths } from './openapi-gateway-request-log';
import { registerTeamPaths, TEAMS_TAG } from './openapi-gateway-teams';
import { registerBillingPaths, registerBudgetPaths, registerUsagePaths } from './openapi-gateway-usage';
import { ANTHROPIC_TAG, registerWirePaths } from './openapi-gateway-wire';
import {
  type BuildOpenApiOptions,
  buildServiceOpenApi,
  jsonBody,
  jsonResponse,
  OPERATIONS_TAG,
} from './openapi-shared';

const KEYS_TAG = 'Provider keys';
const AUTH_ERRORS: readonly ErrorCode[] = [
  'missing_authentication',
  'invalid_api_key',
  'rate_limited',
  'internal',
];

function registerProviderKeyPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/keys',
    operationId: 'storeProviderKey',
    summary: 'Store a provider key (bring your own key)',
    description:
      'Replaces any key already stored for the provider. The key is stored encrypted and never returned.',
    tags: [KEYS_TAG],
    security: SESSION_OR_API_KEY,
    request: {
      body: jsonBody(ZStoreProviderKeyRequest),
    },
    responses: {
      201: jsonResponse('Stored.', ZStoredProviderKey),
      ...buildErrorResponses([
        ...AUTH_ERRORS,
        'validation_failed',
        'unknown_provider',
        'deserialization_error',
        'payload_too_large',
        'csrf_origin',
        // PROVIDER_KEYS_MASTER_KEYS unset: the gateway cannot encrypt, so it stores nothing.
        'service_unavailable',
      ]),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/keys',
    operationId: 'listProviderKeys',
    summary: 'List providers with a stored key',
    description: 'A bare JSON array; the keys themselves are never returned.',
    tags: [KEYS_TAG],
    security: SESSION_OR_API_KEY,
    responses: {
      200: jsonResponse('Stored keys.', ZListProviderKeysResponse),
      ...buildErrorResponses(AUTH_ERRORS),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/v1/keys/{provider}',
    operationId: 'deleteProviderKey',
    summary: 'Delete the stored key of a provider',
    tags: [KEYS_TAG],
    security: SESSION_OR_API_KEY,
    request: { params: ZProviderKeyParams },
    responses: {
      204: { description: 'Deleted.' },
      ...buildErrorResponses([...AUTH_ERRORS, 'unknown_provider', 'provider_key_not_found', 'csrf_origin']),
    },
  });
}

function registerConfigPath(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/config',
    operationId: 'getGatewayConfig',
    summary: 'Public settings for sign-in pages',
    description:
      'No authentication; nothing secret. The web console at `/` reads it to say where the sign-in link goes.',
    tags: [OPERATIONS_TAG.name],
    responses: {
      200: jsonResponse('Settings.', ZGatewayConfigResponse),
    },
  });
}

/** Builds the OpenAPI 3.0.3 document of the AI gateway; a new object per call. */
export function buildGatewayOpenApi(
  options: BuildOpenApiOptions = {},
): ReturnType<OpenApiGeneratorV3['generateDocument']> {
  return buildServiceOpenApi(
    {
      service: 'gateway',
      title: 'AI Gateway',
      description:
        'Chat, streaming and media generation over lanes of AI providers, stored provider keys, magic-link sign-in and API keys.',
      securitySchemes: {
        SessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE_NAME,
          description: 'Session cookie set by verify-code.',
        },
        ApiKeyAuth: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'An API key created with POST /api/v1/auth/api-keys.',
        },
        ServiceToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'GATEWAY_SERVICE_TOKEN, for in-house services (the billing shipper).',
        },
      },
      registerPaths: (registry) => {
        registerAuthPaths(registry);
        registerAiPaths(registry);
        registerProviderKeyPaths(registry);
        registerUsagePaths(registry);
        registerBudgetPaths(registry);
        registerRequestLogPaths(registry);
        registerMcpPaths(registry);
        registerTeamPaths(registry);
        registerBillingPaths(registry);
        registerConfigPath(registry);
        registerOpenAiPaths(registry);
        registerWirePaths(registry);
      },
      tags: [
        ...AUTH_TAGS,
        { name: 'AI', description: 'Completions and media; authenticated with x-api-key.' },
        { name: KEYS_TAG, description: 'Bring your own provider key.' },
        {
          name: 'Usage',
          description: 'Requests, tokens and cost per project, key, model and day; the ledger feed.',
        },
        { name: 'Budgets', description: 'Token and cost budgets per user, API key and project.' },
        REQUEST_LOG_TAG,
        MCP_TAG,
        TEAMS_TAG,
        OPENAI_TAG,
        ANTHROPIC_TAG,
      ],
      // The stream events appear only in the SSE description, so they are listed explicitly.
      extraSchemas: [ZStreamChunkEvent, ZStreamDoneEvent, ZStreamErrorEvent, ...OPENAI_EXTRA_SCHEMAS],
    },
    options,
  );
}
