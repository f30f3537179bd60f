import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import {
  ZListMcpPoliciesResponse,
  ZListMcpServersResponse,
  ZListMcpToolsResponse,
  ZMcpPolicy,
  ZMcpPolicyId,
  ZMcpServerName,
  ZRegisterMcpServerRequest,
  ZRegisterMcpServerResponse,
  ZSetMcpPolicyRequest,
} from './gateway-mcp';
import { buildErrorResponses } from './openapi-errors';
import { SESSION_OR_API_KEY } from './openapi-gateway-auth';
import { jsonBody, jsonResponse } from './openapi-shared';

export const MCP_TAG = {
  name: 'MCP',
  description: 'The MCP gateway: POST /mcp (MCP Streamable HTTP) and its servers and policies (docs/mcp.md).',
};
const tags = [MCP_TAG.name];
const SESSION = [{ SessionCookie: [] }];
const AUTH_ERRORS: readonly ErrorCode[] = [
  'missing_authentication',
  'invalid_api_key',
  'rate_limited',
  'internal',
];
const ZServerParams = z.object({ name: ZMcpServerName });

function registerServerPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/mcp/servers',
    operationId: 'listMcpServers',
    summary: "The operator's MCP servers and your own",
    tags,
    security: SESSION_OR_API_KEY,
    responses: {
      200: jsonResponse('Servers.', ZListMcpServersResponse),
      ...buildErrorResponses(AUTH_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/mcp/servers',
    operationId: 'registerMcpServer',
    summary: 'Register a remote MCP server',
    description:
      'Streamable HTTP or HTTP+SSE URLs only, never a command. The gateway checks the server (initialize, tools/list) before storing it; credentials are stored encrypted and never returned.',
    tags,
    security: SESSION_OR_API_KEY,
    request: { body: jsonBody(ZRegisterMcpServerRequest) },
    responses: {
      201: jsonResponse('Registered, with its tools.', ZRegisterMcpServerResponse),
      ...buildErrorResponses([
        ...AUTH_ERRORS,
        'validation_failed',
        'deserialization_error',
        'csrf_origin',
        'mcp_server_exists',
        'mcp_url_forbidden',
        'mcp_server_unreachable',
        'service_unavailable',
      ]),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/v1/mcp/servers/{name}',
    operationId: 'deleteMcpServer',
    summary: 'Remove a server you registered',
    tags,
    security: SESSION_OR_API_KEY,
    request: { params: ZServerParams },
    responses: {
      204: { description: 'Removed.' },
      ...buildErrorResponses([...AUTH_ERRORS, 'mcp_server_not_found', 'csrf_origin']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/mcp/servers/{name}/tools',
    operationId: 'listMcpServerTools',
    summary: 'The tools of a server, as it lists them now',
    tags,
    security: SESSION_OR_API_KEY,
    request: { params: ZServerParams },
    responses: {
      200: jsonResponse('Tools.', ZListMcpToolsResponse),
      ...buildErrorResponses([...AUTH_ERRORS, 'mcp_server_not_found', 'mcp_server_unreachable']),
    },
  });
}

function registerPolicyPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/mcp/policies',
    operationId: 'listMcpPolicies',
    summary: 'MCP policies of your keys and projects',
    tags,
    security: SESSION_OR_API_KEY,
    responses: {
      200: jsonResponse('Policies.', ZListMcpPoliciesResponse),
      ...buildErrorResponses(AUTH_ERRORS),
    },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/v1/mcp/policies',
    operationId: 'setMcpPolicy',
    summary: 'Set which MCP servers and tools a key or project may use',
    description:
      'Signed-in session only: a key cannot widen its own access. Applies to open MCP sessions within seconds.',
    tags,
    security: SESSION,
    request: { body: jsonBody(ZSetMcpPolicyRequest) },
    responses: {
      200: jsonResponse('The policy.', ZMcpPolicy),
      ...buildErrorResponses([
        ...AUTH_ERRORS,
        'validation_failed',
        'deserialization_error',
        'api_key_not_found',
        'csrf_origin',
      ]),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/v1/mcp/policies',
    operationId: 'deleteMcpPolicy',
    summary: 'Remove a policy (the defaults apply again)',
    tags,
    security: SESSION,
    request: { query: ZMcpPolicyId },
    responses: {
      204: { description: 'Removed.' },
      ...buildErrorResponses([...AUTH_ERRORS, 'validation_failed', 'not_found', 'csrf_origin']),
    },
  });
}

export function registerMcpPaths(registry: OpenAPIRegistry): void {
  registerServerPaths(registry);
  registerPolicyPaths(registry);
}
