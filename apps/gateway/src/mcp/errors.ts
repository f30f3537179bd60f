import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC error codes the gateway answers a single MCP call with, in the
 * range JSON-RPC leaves to implementations (-32000 to -32099). A failed call
 * fails alone: the session and the other servers keep working.
 */
export const MCP_GATEWAY_ERRORS = {
  /** The key's or the server's call rate, or a budget, is spent; `data.retry_after_seconds`. */
  rate_limited: -32029,
  /** The server could not be reached, answered something that is not MCP, or its circuit is open. */
  upstream_unavailable: -32050,
  /** The tool's result is larger than the gateway passes on (max_result_bytes). */
  result_too_large: -32051,
} as const;

export function notAllowed(name: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Tool ${name} is not allowed for this API key`);
}

export function unknownTool(name: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
}

export function rateLimited(what: string, retryAfterMs: number): McpError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new McpError(MCP_GATEWAY_ERRORS.rate_limited, `${what}; retry after ${seconds} s`, {
    retry_after_seconds: seconds,
  });
}

export function upstreamUnavailable(server: string, why: string): McpError {
  return new McpError(MCP_GATEWAY_ERRORS.upstream_unavailable, `MCP server ${server} ${why}`);
}

export function timedOut(server: string, ms: number): McpError {
  return new McpError(ErrorCode.RequestTimeout, `MCP server ${server} did not answer within ${ms} ms`);
}
