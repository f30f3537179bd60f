import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  type ListMcpServersResponse,
  type ListMcpToolsResponse,
  type McpServerView,
  type RegisterMcpServerResponse,
  ZMcpServerName,
  ZRegisterMcpServerRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';
import type { PrismaClient } from '../generated/prisma/client';
import type { MasterKeyRing } from '../provider-keys/crypto';
import type { McpServerConfig } from './config';
import type { McpGateway } from './gateway';
import { exposedName } from './names';
import { countUserServers, deleteUserServer, insertUserServer } from './server-repo';
import { checkUserServerUrl } from './ssrf';

/** Registration and "see its tools" wait at most this long for the server. */
const CHECK_TIMEOUT_MS = 15_000;
const MAX_TOOL_PAGES = 20;

function toView(server: McpServerConfig): McpServerView {
  return {
    name: server.name,
    transport: server.transport,
    source: server.owner ? 'user' : 'operator',
    default_allowed: server.default_allowed,
    price_per_call: server.price_per_call,
    ...(server.owner ? { url: server.url } : {}),
    credential_headers: Object.keys(server.headers),
  };
}

/**
 * The server's tools, read through a session of its own (initialize, then
 * every page of tools/list): what registration checks and the console shows.
 * Any failure is 422 mcp_server_unreachable, without the server's words.
 */
async function probeTools(
  gateway: McpGateway,
  server: McpServerConfig,
): Promise<ListMcpToolsResponse['tools']> {
  const timeoutMs = Math.min(gateway.runtime.config.timeout_ms, CHECK_TIMEOUT_MS);
  let tools: Tool[] = [];
  try {
    const fetch = gateway.runtime.fetchFor(server);
    // The MCP SDK's client side loads with the first probe or session (issue 46: memory).
    const { openUpstreamSession } = require('./upstream') as typeof import('./upstream');
    const session = await openUpstreamSession(server, { timeoutMs, ...(fetch ? { fetch } : {}) });
    try {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
        const r = await session.client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
        tools = tools.concat(r.tools);
        cursor = r.nextCursor;
        if (!cursor) break;
      }
    } finally {
      await session.close();
    }
  } catch (cause) {
    throw new AppError('mcp_server_unreachable', {
      cause,
      details: [{ path: 'url', message: 'initialize or tools/list did not succeed' }],
    });
  }
  return tools.map((t) => ({
    name: t.name,
    exposed_name: exposedName(server.name, t.name),
    ...(t.description ? { description: t.description } : {}),
  }));
}

async function findServer(gateway: McpGateway, userId: string, raw: unknown): Promise<McpServerConfig> {
  const name = ZMcpServerName.safeParse(raw);
  const server = name.success
    ? (await gateway.runtime.servers(userId)).find((s) => s.name === name.data)
    : undefined;
  if (!server) throw new AppError('mcp_server_not_found');
  return server;
}

/**
 * `/api/v1/mcp/servers`: the operator's servers and the caller's own, a
 * remote server's registration (checked with initialize and tools/list
 * before it is stored; its credential headers sealed with the provider-key
 * master key; its URL refused when it resolves to an internal address, see
 * ssrf.ts), its removal, and its tools as it lists them now. No field can
 * carry a command: stdio servers cannot be registered.
 */
export function createMcpServerRouter(opts: {
  prisma: PrismaClient;
  gateway: McpGateway;
  masterKeys: MasterKeyRing | null;
  auth: RequestHandler;
  csrf: RequestHandler;
}): Router {
  const { gateway, prisma } = opts;
  const config = gateway.runtime.config;
  const router = Router();
  router.get('/api/v1/mcp/servers', opts.auth, async (_req, res) => {
    const servers = await gateway.runtime.servers(requireAuthOf(res).userId);
    res.json({ servers: servers.map(toView) } satisfies ListMcpServersResponse);
  });
  router.get('/api/v1/mcp/servers/:name/tools', opts.auth, async (req, res) => {
    const server = await findServer(gateway, requireAuthOf(res).userId, req.params.name);
    res.json({
      server: server.name,
      tools: await probeTools(gateway, server),
    } satisfies ListMcpToolsResponse);
  });
  router.post('/api/v1/mcp/servers', opts.auth, opts.csrf, jsonBody('64kb'), async (req, res) => {
    const body = parseRequestPart(ZRegisterMcpServerRequest, req.body);
    const { userId } = requireAuthOf(res);
    if (!config.user_servers.enabled) throw new AppError('forbidden');
    if (config.servers.some((s) => s.name === body.name)) throw new AppError('mcp_server_exists');
    if ((await countUserServers(prisma, userId)) >= config.user_servers.max_per_user) {
      throw new AppError('validation_failed', {
        details: [{ path: 'name', message: `at most ${config.user_servers.max_per_user} servers per user` }],
      });
    }
    // Without a master key credentials cannot be stored encrypted: store nothing.
    if (Object.keys(body.headers).length > 0 && !opts.masterKeys) throw new AppError('service_unavailable');
    if (!(await checkUserServerUrl({ allowedHosts: config.user_servers.allowed_hosts }, body.url))) {
      throw new AppError('mcp_url_forbidden');
    }
    const server: McpServerConfig = { ...body, price_per_call: 0, default_allowed: true, owner: userId };
    const tools = await probeTools(gateway, server);
    if (!(await insertUserServer(prisma, opts.masterKeys, userId, body)))
      throw new AppError('mcp_server_exists');
    gateway.invalidateServers(userId);
    res.status(201).json({ server: toView(server), tools } satisfies RegisterMcpServerResponse);
  });
  router.delete('/api/v1/mcp/servers/:name', opts.auth, opts.csrf, async (req, res) => {
    const { userId } = requireAuthOf(res);
    const name = ZMcpServerName.safeParse(req.params.name);
    if (!name.success || !(await deleteUserServer(prisma, userId, name.data))) {
      throw new AppError('mcp_server_not_found');
    }
    gateway.invalidateServers(userId);
    res.status(204).end();
  });
  return router;
}
