import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { METRICS_CONTENT_TYPE, ZErrorBody, ZHealthResponse, ZReadinessResponse } from './common';
import { buildErrorResponses } from './openapi-errors';

/** Options of both document builders. */
export type BuildOpenApiOptions = {
  /** Base URL in `servers`; defaults to `/`, i.e. wherever the document is served from. */
  serverUrl?: string;
};

/** Tag of the unauthenticated operational endpoints. */
export const OPERATIONS_TAG = {
  name: 'Operations',
  description: 'Health, metrics and this document; no authentication.',
};

/** Registers `/health`, `/health/ready`, `/openapi.json` and `/metrics`, served alike by both services. */
export function registerOperationalPaths(registry: OpenAPIRegistry, service: string): void {
  registry.registerPath({
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Health check',
    tags: [OPERATIONS_TAG.name],
    responses: {
      200: {
        description: `The ${service} service is up.`,
        content: { 'application/json': { schema: ZHealthResponse } },
      },
      ...buildErrorResponses(['service_unavailable', 'internal']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/health/ready',
    operationId: 'getReadiness',
    summary: 'Readiness check',
    description:
      'Checks every dependency (each within 1.5 s). 503 while a required one is down; `/health` stays the cheap liveness answer.',
    tags: [OPERATIONS_TAG.name],
    responses: {
      200: {
        description: `The ${service} service and its required dependencies are up.`,
        content: { 'application/json': { schema: ZReadinessResponse } },
      },
      503: {
        description:
          'A required dependency is down: `{"error":"service unavailable","request_id":…}` plus the fields of the readiness report (`status: not_ready`, `checks`).',
        content: { 'application/json': { schema: ZErrorBody } },
      },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.0 document',
    tags: [OPERATIONS_TAG.name],
    responses: {
      200: {
        description: 'The OpenAPI 3.0 description of the service.',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description: 'Prometheus text exposition format. Meant for the scraper on the internal network.',
    tags: [OPERATIONS_TAG.name],
    responses: {
      200: {
        description: 'Current metrics.',
        content: { [METRICS_CONTENT_TYPE]: { schema: { type: 'string' } } },
      },
    },
  });
}
