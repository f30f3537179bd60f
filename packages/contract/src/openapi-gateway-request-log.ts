import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import {
  ZListProjectSettingsResponse,
  ZProjectSettings,
  ZRequestLogDetail,
  ZRequestLogQuery,
  ZRequestLogResponse,
  ZSetProjectSettingsRequest,
} from './gateway-request-log';
import { buildErrorResponses } from './openapi-errors';
import { SESSION_OR_API_KEY } from './openapi-gateway-auth';
import { jsonBody, jsonResponse } from './openapi-shared';

const AUTH_ERRORS: readonly ErrorCode[] = [
  'missing_authentication',
  'invalid_api_key',
  'rate_limited',
  'internal',
];

export const REQUEST_LOG_TAG = {
  name: 'Request log',
  description:
    'Every AI request with its attempts, timings, tokens, cost and error, searchable; prompts and answers only for projects that capture them (docs/observability.md).',
};

export function registerRequestLogPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/request-log',
    operationId: 'searchRequestLog',
    summary: "The caller's AI requests, newest first, filtered",
    description:
      'Filters combine (AND). Pages of at most 200 rows; pass `next_cursor` as `cursor` for the next page (null on the last). Rows appear about a second after their request. Captured prompts and answers are only in the single-request view.',
    tags: [REQUEST_LOG_TAG.name],
    security: SESSION_OR_API_KEY,
    request: { query: ZRequestLogQuery },
    responses: {
      200: jsonResponse('A page of requests.', ZRequestLogResponse),
      ...buildErrorResponses([...AUTH_ERRORS, 'validation_failed', 'deserialization_error']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/request-log/{request_id}',
    operationId: 'getRequestLogEntry',
    summary: 'One request with its attempts (and captured content)',
    description:
      "The attempts in order with target, outcome, status, start and duration. `content` holds the prompt and answer when the request's project captured them and the caller is its owner; a team's key never gets it.",
    tags: [REQUEST_LOG_TAG.name],
    security: SESSION_OR_API_KEY,
    request: { params: z.object({ request_id: z.uuid() }) },
    responses: {
      200: jsonResponse('The request.', ZRequestLogDetail),
      ...buildErrorResponses([...AUTH_ERRORS, 'not_found']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/project-settings',
    operationId: 'listProjectSettings',
    summary: "The caller's projects with settings other than the defaults",
    tags: [REQUEST_LOG_TAG.name],
    security: SESSION_OR_API_KEY,
    responses: {
      200: jsonResponse('Stored settings, by project id.', ZListProjectSettingsResponse),
      ...buildErrorResponses(AUTH_ERRORS),
    },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/v1/project-settings',
    operationId: 'setProjectSettings',
    summary: "Turn prompt and answer capture on or off for one of the caller's projects",
    description:
      "Off by default. On, the request log keeps each request's prompt and answer, redacted and cut at 16,384 characters each, for as long as the request's row (REQUEST_LOG_RETENTION_DAYS); turning it off keeps what was captured until then. Applies within a second on this instance and at most 30 s on the others. A team's key is refused (403): a team's admins set it in the team's settings.",
    tags: [REQUEST_LOG_TAG.name],
    security: SESSION_OR_API_KEY,
    request: { body: jsonBody(ZSetProjectSettingsRequest) },
    responses: {
      200: jsonResponse('The project settings now in force.', ZProjectSettings),
      ...buildErrorResponses([
        ...AUTH_ERRORS,
        'validation_failed',
        'deserialization_error',
        'forbidden',
        'csrf_origin',
      ]),
    },
  });
}
