import {
  OpenAPIRegistry,
  OpenApiGeneratorV3,
  type ResponseConfig,
  type RouteConfig,
  type ZodMediaTypeObject,
} from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { METRICS_CONTENT_TYPE, ZErrorBody, ZHealthResponse, ZReadinessResponse } from './common';
import { buildErrorResponses } from './openapi-errors';

/** Options of both document builders. */
export type BuildOpenApiOptions = {
  /** Base URL in `servers`; defaults to `/`, i.e. wherever the document is served from. */
  serverUrl?: string;
};

/** A route's request body, as zod-to-openapi types it. */
type RequestBody = NonNullable<NonNullable<RouteConfig['request']>['body']>;

/**
 * A required request body of JSON. The return type is named so the emitted
 * declarations do not spell out openapi3-ts types, which a package importing
 * @platform/contract (or @platform/client) from outside cannot resolve.
 */
export function jsonBody(schema: ZodMediaTypeObject['schema']): RequestBody {
  return { required: true, content: { 'application/json': { schema } } };
}

/** A response with a JSON body. */
export function jsonResponse(description: string, schema: ZodMediaTypeObject['schema']): ResponseConfig {
  return { description, content: { 'application/json': { schema } } };
}

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
      200: jsonResponse(`The ${service} service is up.`, ZHealthResponse),
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
      200: jsonResponse(`The ${service} service and its required dependencies are up.`, ZReadinessResponse),
      503: jsonResponse(
        'A required dependency is down: `{"error":"service unavailable","request_id":…}` plus the fields of the readiness report (`status: not_ready`, `checks`).',
        ZErrorBody,
      ),
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
    description:
      'Prometheus text exposition format, for the scraper on the internal network: answered only with ' +
      '`Authorization: Bearer <METRICS_TOKEN>`, or without the token set only to a loopback client not ' +
      'behind a proxy; anyone else gets the 404 of an unknown path. The reverse proxy never forwards it.',
    tags: [OPERATIONS_TAG.name],
    responses: {
      200: {
        description: 'Current metrics.',
        content: { [METRICS_CONTENT_TYPE]: { schema: { type: 'string' } } },
      },
      404: jsonResponse(
        'Not this caller (no or a wrong bearer token, or not on loopback without one): `{"error":"not found","request_id":…}`.',
        ZErrorBody,
      ),
    },
  });
}

/** What one service's OpenAPI document holds besides what `buildServiceOpenApi` gives every service. */
export type ServiceOpenApi = {
  /** The service's name in the health descriptions. */
  service: string;
  title: string;
  description: string;
  /** Header or cookie credentials, by scheme name. */
  securitySchemes: Record<
    string,
    | { type: 'apiKey'; in: 'header' | 'cookie'; name: string; description: string }
    | { type: 'http'; scheme: 'bearer'; description: string }
  >;
  registerPaths: (registry: OpenAPIRegistry) => void;
  /** Tags after the Operations tag. */
  tags: { name: string; description: string }[];
  /** Schemas no operation refers to (e.g. events described only in prose), listed as components anyway. */
  extraSchemas?: readonly z.ZodType[];
};

/**
 * Builds a service's OpenAPI 3.0.3 document (a new object per call): its
 * security schemes, the operational paths, its own paths and tags.
 */
export function buildServiceOpenApi(
  spec: ServiceOpenApi,
  options: BuildOpenApiOptions,
): ReturnType<OpenApiGeneratorV3['generateDocument']> {
  const registry = new OpenAPIRegistry();
  for (const [name, scheme] of Object.entries(spec.securitySchemes)) {
    registry.registerComponent('securitySchemes', name, scheme);
  }
  registerOperationalPaths(registry, spec.service);
  spec.registerPaths(registry);
  const extra = (spec.extraSchemas ?? []).map((schema) => ({ type: 'schema' as const, schema }));
  return new OpenApiGeneratorV3([...registry.definitions, ...extra]).generateDocument({
    openapi: '3.0.3',
    info: { title: spec.title, version: '1.0.0', description: spec.description },
    servers: [{ url: options.serverUrl ?? '/' }],
    tags: [OPERATIONS_TAG, ...spec.tags],
  });
}
