import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { callTool } from './calls';
import {
  type CatalogContext,
  listPrompts,
  listResources,
  listResourceTemplates,
  listTools,
  timeoutOf,
  visibleServers,
} from './catalog';
import { upstreamUnavailable } from './errors';

/** The gateway as the client sees it. */
const SERVER_INFO = { name: 'ai-gateway-mcp', version: '1.0.0' };

const INSTRUCTIONS =
  'Tools, resources and prompts of the MCP servers this API key may use, named <server>__<name>.';

/**
 * Runs a read on the server that owns a prompt or resource. A failure is
 * that request's MCP error; a JSON-RPC error the server sent passes through.
 */
async function onServer<T>(ctx: CatalogContext, serverName: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) throw err;
    ctx.rt.breaker.record(serverName, false);
    ctx.pool.drop(serverName);
    throw upstreamUnavailable(serverName, 'failed to answer');
  }
}

async function readResource(ctx: CatalogContext, uri: string) {
  let owner = ctx.catalog.resources.get(uri);
  if (!owner) {
    await listResources(ctx);
    owner = ctx.catalog.resources.get(uri);
  }
  const { servers } = await visibleServers(ctx);
  const server = owner && servers.find((s) => s.name === owner.name);
  if (!server) throw new McpError(ErrorCode.InvalidParams, `Resource ${uri} not found`);
  const client = await onServer(ctx, server.name, () => ctx.pool.client(server));
  return onServer(ctx, server.name, () =>
    client.readResource({ uri }, { timeout: timeoutOf(ctx.rt, server) }),
  );
}

async function getPrompt(ctx: CatalogContext, name: string, args: Record<string, string> | undefined) {
  let found = ctx.catalog.prompts.get(name);
  if (!found) {
    await listPrompts(ctx);
    found = ctx.catalog.prompts.get(name);
  }
  const { servers } = await visibleServers(ctx);
  const server = found && servers.find((s) => s.name === found.server.name);
  if (!found || !server) throw new McpError(ErrorCode.InvalidParams, `Prompt ${name} not found`);
  const client = await onServer(ctx, server.name, () => ctx.pool.client(server));
  return onServer(ctx, server.name, () =>
    client.getPrompt(
      { name: found.prompt, ...(args ? { arguments: args } : {}) },
      { timeout: timeoutOf(ctx.rt, server) },
    ),
  );
}

/**
 * The MCP server a client session talks to: every list aggregates the
 * servers the key may use (names namespaced), every call goes to the one
 * server behind the name on this session's upstream session.
 */
export function createSessionServer(ctx: CatalogContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
    instructions: INSTRUCTIONS,
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listTools(ctx) }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => callTool(ctx, req.params, extra.signal));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: await listPrompts(ctx) }));
  server.setRequestHandler(GetPromptRequestSchema, (req) =>
    getPrompt(ctx, req.params.name, req.params.arguments),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: await listResources(ctx),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: await listResourceTemplates(ctx),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(ctx, req.params.uri));
  return server;
}
