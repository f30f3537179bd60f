import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './config';
import { exposedName } from './names';
import { type PolicySet, serverAllowedBy, toolAllowedBy } from './policy';
import type { McpRuntime, SessionOwner } from './runtime';
import type { UpstreamPool } from './upstream-pool';

/** Pages read from one server per listing; a server paging past this is cut off. */
const MAX_PAGES = 20;

/** What a client session has been shown: exposed names back to their server's own names. */
export type SessionCatalog = {
  tools: Map<string, { server: McpServerConfig; tool: string }>;
  /** Exposed names of tools the servers list but the key may not use: refused as such on call. */
  refused: Set<string>;
  prompts: Map<string, { server: McpServerConfig; prompt: string }>;
  /** Resource URI -> the server that listed it. */
  resources: Map<string, McpServerConfig>;
};

export function emptyCatalog(): SessionCatalog {
  return { tools: new Map(), refused: new Set(), prompts: new Map(), resources: new Map() };
}

export type CatalogContext = {
  rt: McpRuntime;
  owner: SessionOwner;
  pool: UpstreamPool;
  catalog: SessionCatalog;
};

export function timeoutOf(rt: McpRuntime, server: McpServerConfig): number {
  return server.timeout_ms ?? rt.config.timeout_ms;
}

/** The servers this key may use now, with its policy. */
export async function visibleServers(
  ctx: CatalogContext,
): Promise<{ policies: PolicySet; servers: McpServerConfig[] }> {
  const [servers, policies] = await Promise.all([
    ctx.rt.servers(ctx.owner.userId),
    ctx.rt.policiesOf(ctx.owner),
  ]);
  return { policies, servers: servers.filter((s) => serverAllowedBy(policies, s)) };
}

/**
 * Runs `read` on every visible server in parallel. A server whose circuit is
 * open, or that fails or times out, is left out of the answer (and counted by
 * the breaker); the others are still listed.
 */
async function fromEachServer<T>(
  ctx: CatalogContext,
  servers: McpServerConfig[],
  read: (client: Client, server: McpServerConfig) => Promise<T[]>,
): Promise<Array<{ server: McpServerConfig; items: T[] }>> {
  const { rt, pool } = ctx;
  const results = await Promise.all(
    servers.map(async (server) => {
      if (rt.breaker.isOpen(server.name)) return null;
      try {
        const items = await read(await pool.client(server), server);
        rt.breaker.record(server.name, true);
        return { server, items };
      } catch (err) {
        rt.breaker.record(server.name, false);
        pool.drop(server.name);
        rt.logger.warn({ server: server.name, err: String(err) }, 'mcp server left out of a listing');
        return null;
      }
    }),
  );
  return results.filter((r) => r !== null);
}

/** Reads every page of a paginated list method. */
async function allPages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i += 1) {
    const result = await page(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return items;
}

/** The tools of every server the key may use, minus the tools it may not, under their exposed names. */
export async function listTools(ctx: CatalogContext): Promise<Tool[]> {
  const { policies, servers } = await visibleServers(ctx);
  const lists = await fromEachServer(ctx, servers, (client, server) =>
    allPages(async (cursor) => {
      const r = await client.listTools(cursor ? { cursor } : undefined, {
        timeout: timeoutOf(ctx.rt, server),
      });
      return { items: r.tools, nextCursor: r.nextCursor };
    }),
  );
  const tools: Tool[] = [];
  for (const { server, items } of lists) {
    for (const tool of items) {
      const name = exposedName(server.name, tool.name);
      if (!toolAllowedBy(policies, server, tool.name)) {
        ctx.catalog.tools.delete(name);
        ctx.catalog.refused.add(name);
        continue;
      }
      ctx.catalog.refused.delete(name);
      ctx.catalog.tools.set(name, { server, tool: tool.name });
      tools.push({ ...tool, name, title: tool.title ?? tool.name });
    }
  }
  return tools;
}

export async function listPrompts(ctx: CatalogContext): Promise<Prompt[]> {
  const { servers } = await visibleServers(ctx);
  const withPrompts = (client: Client) => client.getServerCapabilities()?.prompts !== undefined;
  const lists = await fromEachServer(ctx, servers, (client, server) =>
    withPrompts(client)
      ? allPages(async (cursor) => {
          const r = await client.listPrompts(cursor ? { cursor } : undefined, {
            timeout: timeoutOf(ctx.rt, server),
          });
          return { items: r.prompts, nextCursor: r.nextCursor };
        })
      : Promise.resolve([]),
  );
  return lists.flatMap(({ server, items }) =>
    items.map((prompt) => {
      const name = exposedName(server.name, prompt.name);
      ctx.catalog.prompts.set(name, { server, prompt: prompt.name });
      return { ...prompt, name };
    }),
  );
}

export async function listResources(ctx: CatalogContext): Promise<Resource[]> {
  const { servers } = await visibleServers(ctx);
  const withResources = (client: Client) => client.getServerCapabilities()?.resources !== undefined;
  const lists = await fromEachServer(ctx, servers, (client, server) =>
    withResources(client)
      ? allPages(async (cursor) => {
          const r = await client.listResources(cursor ? { cursor } : undefined, {
            timeout: timeoutOf(ctx.rt, server),
          });
          return { items: r.resources, nextCursor: r.nextCursor };
        })
      : Promise.resolve([]),
  );
  return lists.flatMap(({ server, items }) =>
    items.filter((r) => {
      // Two servers listing one URI: the first keeps it, so a read goes where the listing said.
      const owner = ctx.catalog.resources.get(r.uri);
      if (owner && owner.name !== server.name) return false;
      ctx.catalog.resources.set(r.uri, server);
      return true;
    }),
  );
}

export async function listResourceTemplates(ctx: CatalogContext): Promise<ResourceTemplate[]> {
  const { servers } = await visibleServers(ctx);
  const withResources = (client: Client) => client.getServerCapabilities()?.resources !== undefined;
  const lists = await fromEachServer(ctx, servers, (client, server) =>
    withResources(client)
      ? allPages(async (cursor) => {
          const r = await client.listResourceTemplates(cursor ? { cursor } : undefined, {
            timeout: timeoutOf(ctx.rt, server),
          });
          return { items: r.resourceTemplates, nextCursor: r.nextCursor };
        })
      : Promise.resolve([]),
  );
  return lists.flatMap(({ items }) => items);
}
