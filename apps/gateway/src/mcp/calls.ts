import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  type CallToolResult,
  ErrorCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { isAppError } from '@platform/errors';
import { endSpan, inSpan, startSpan, tracingOn } from '@platform/service-kit';
import type { FinishToolCall } from './accounting';
import { type CatalogContext, listTools, timeoutOf, visibleServers } from './catalog';
import type { McpServerConfig } from './config';
import {
  MCP_GATEWAY_ERRORS,
  notAllowed,
  rateLimited,
  timedOut,
  unknownTool,
  upstreamUnavailable,
} from './errors';
import type { ToolCallResult } from './metrics';
import { serverOfExposed } from './names';
import { toolAllowedBy } from './policy';

type Resolved = { server: McpServerConfig; tool: string };

/**
 * The server and tool behind an exposed name, if the key may call it. A name
 * the session has not been shown is looked up by listing again; a tool the
 * key may not use is refused without reaching its server (LiteLLM #15078).
 */
async function resolveTool(ctx: CatalogContext, name: string): Promise<Resolved> {
  const { policies, servers } = await visibleServers(ctx);
  const allowed = (r: Resolved | undefined) =>
    r !== undefined &&
    servers.some((s) => s.name === r.server.name) &&
    toolAllowedBy(policies, r.server, r.tool);
  let found = ctx.catalog.tools.get(name);
  if (!found) {
    const prefix = serverOfExposed(name);
    if (prefix && !servers.some((s) => s.name === prefix)) {
      const configured = (await ctx.rt.servers(ctx.owner.userId)).some((s) => s.name === prefix);
      throw configured ? notAllowed(name) : unknownTool(name);
    }
    await listTools(ctx);
    found = ctx.catalog.tools.get(name);
    if (!found) throw ctx.catalog.refused.has(name) ? notAllowed(name) : unknownTool(name);
  }
  if (!allowed(found)) throw notAllowed(name);
  return found;
}

/** Rate limits of the key (across servers) and of the server (across keys). */
async function checkRates(ctx: CatalogContext, server: McpServerConfig): Promise<void> {
  const { rt, owner } = ctx;
  const keyWait = await rt.hit(`key:${owner.apiKeyId}`, rt.config.calls_per_minute_per_key);
  if (keyWait !== null) throw rateLimited('Too many MCP calls for this API key', keyWait);
  if (server.calls_per_minute !== undefined) {
    const serverWait = await rt.hit(`server:${server.name}`, server.calls_per_minute);
    if (serverWait !== null) throw rateLimited(`Too many calls to MCP server ${server.name}`, serverWait);
  }
}

/** Reserves the call's price; a spent budget answers as a rate limit, with its reset time. */
async function beginAccounting(ctx: CatalogContext, r: Resolved): Promise<FinishToolCall> {
  try {
    return await ctx.rt.accounting.begin({
      ...ctx.owner,
      server: r.server.name,
      tool: r.tool,
      priceMicros: Math.round(r.server.price_per_call * 1_000_000),
    });
  } catch (err) {
    if (isAppError(err) && err.code === 'rate_limited') {
      const retry = Number(err.headers?.['Retry-After'] ?? 60) * 1000;
      throw rateLimited(err.details?.[0]?.message ?? 'A budget is spent', retry);
    }
    throw err;
  }
}

type Outcome = { result: ToolCallResult; status: number; error?: McpError; value?: CallToolResult };

/** Sorts what the upstream call returned or threw into the call's outcome. */
function outcomeOf(
  server: McpServerConfig,
  ms: number,
  value: CallToolResult | undefined,
  err: unknown,
): Outcome {
  if (value) return { result: value.isError ? 'tool_error' : 'ok', status: 200, value };
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    return { result: 'timeout', status: 504, error: timedOut(server.name, ms) };
  }
  if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) {
    // The server answered with a JSON-RPC error: it is alive, the call was wrong.
    return { result: 'tool_error', status: 200, error: new McpError(err.code, err.message, err.data) };
  }
  return {
    result: 'upstream_error',
    status: 502,
    error: upstreamUnavailable(server.name, 'failed to answer'),
  };
}

/** The most of a call's arguments or result one payload log line keeps. */
const PAYLOAD_LOG_CHARS = 64 * 1024;

/**
 * Arguments and result of a call of a project in `payload_log_projects`, to
 * the log: the logger redacts secret-looking fields and tokens in every line
 * (the log redaction rules). Other projects' payloads are never written.
 */
function logPayload(
  ctx: CatalogContext,
  call: { server: string; tool: string; params: CallToolRequest['params']; outcome: Outcome },
): void {
  if (!ctx.rt.config.payload_log_projects.includes(ctx.owner.projectId)) return;
  const cut = (value: unknown) => {
    const text = JSON.stringify(value ?? null);
    return text.length > PAYLOAD_LOG_CHARS ? `${text.slice(0, PAYLOAD_LOG_CHARS)}...` : value;
  };
  ctx.rt.logger.info(
    {
      mcp_payload: {
        project: ctx.owner.projectId,
        api_key_id: ctx.owner.apiKeyId,
        server: call.server,
        tool: call.tool,
        arguments: cut(call.params.arguments),
        result: call.outcome.value ? cut(call.outcome.value) : null,
        error: call.outcome.error?.message ?? null,
      },
    },
    'mcp call payload',
  );
}

/**
 * One `tools/call` through the gateway: resolve and govern the name, rate
 * limits, the server's breaker, a budget reservation, the call on the client
 * session's upstream session with its timeout, the result's size bound, then
 * exactly one ledger record before the answer goes out.
 */
export async function callTool(
  ctx: CatalogContext,
  params: CallToolRequest['params'],
  signal: AbortSignal,
): Promise<CallToolResult> {
  const { rt } = ctx;
  const started = rt.clock();
  let resolved: Resolved | undefined;
  const seconds = () => (rt.clock() - started) / 1000;
  try {
    resolved = await resolveTool(ctx, params.name);
    await checkRates(ctx, resolved.server);
    if (rt.breaker.isOpen(resolved.server.name)) {
      throw upstreamUnavailable(resolved.server.name, 'is failing; its circuit is open');
    }
  } catch (err) {
    const result: ToolCallResult =
      err instanceof McpError && err.code === MCP_GATEWAY_ERRORS.rate_limited
        ? 'rate_limited'
        : err instanceof McpError && err.code === MCP_GATEWAY_ERRORS.upstream_unavailable
          ? 'circuit_open'
          : 'refused';
    rt.metrics.call(resolved?.server.name ?? '', resolved?.tool ?? '', result, seconds());
    throw err;
  }
  const { server, tool } = resolved;
  const finish = await beginAccounting(ctx, resolved);
  const timeout = timeoutOf(rt, server);
  const options: RequestOptions = { timeout, signal };
  let value: CallToolResult | undefined;
  let failure: unknown;
  // The GenAI conventions' tool span; the call's context carries it to the upstream session.
  const span = tracingOn()
    ? startSpan(
        `execute_tool ${tool}`,
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool,
          'gateway.mcp.server': server.name,
        },
        'client',
      )
    : undefined;
  try {
    const client = await ctx.pool.client(server);
    value = (await inSpan(span, () =>
      client.callTool({ ...params, name: tool }, undefined, options),
    )) as CallToolResult;
  } catch (err) {
    failure = err;
  }
  const outcome = outcomeOf(server, timeout, value, failure);
  if (span)
    endSpan(
      span,
      { 'gateway.mcp.result': outcome.result, 'http.response.status_code': outcome.status },
      outcome.result === 'ok' ? undefined : outcome.result,
    );
  const bytesIn = Buffer.byteLength(JSON.stringify(params.arguments ?? {}));
  const bytesOut = value ? Buffer.byteLength(JSON.stringify(value)) : 0;
  if (outcome.value && bytesOut > rt.config.max_result_bytes) {
    outcome.result = 'too_large';
    outcome.status = 413;
    outcome.error = new McpError(
      MCP_GATEWAY_ERRORS.result_too_large,
      `The result of ${params.name} (${bytesOut} bytes) is over the gateway's limit of ${rt.config.max_result_bytes} bytes`,
    );
  }
  rt.breaker.record(server.name, outcome.status !== 502 && outcome.status !== 504);
  if (outcome.status === 502) ctx.pool.drop(server.name);
  rt.metrics.call(server.name, tool, outcome.result, seconds(), { in: bytesIn, out: bytesOut });
  logPayload(ctx, { server: server.name, tool, params, outcome });
  try {
    await finish({ status: outcome.status });
  } catch {
    throw new McpError(ErrorCode.InternalError, 'The call could not be recorded; its result is withheld');
  }
  if (outcome.error) throw outcome.error;
  return outcome.value as CallToolResult;
}
