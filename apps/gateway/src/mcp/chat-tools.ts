import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '@platform/errors';
import { callTool } from './calls';
import { type CatalogContext, emptyCatalog, listTools } from './catalog';
import type { McpGateway } from './gateway';
import type { SessionOwner } from './runtime';
import { createUpstreamPool } from './upstream-pool';

/** A chat request's `tools` entry naming an MCP server (OpenAI's `type: "mcp"` tool). */
export type McpToolRequest = { server: string; allowedTools: string[] | null };

/** An MCP tool as a chat function tool (`name` is the exposed `<server>__<tool>`). */
export type ChatFunctionTool = {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
};

/** What a model's call of an MCP tool produced, for the answer's `mcp_call` output item. */
export type McpCallRecord = {
  server: string;
  /** The server's own tool name. */
  tool: string;
  arguments: string;
  output: string | null;
  error: string | null;
};

/** The MCP tools of one chat request: offered to the model, run when it calls them. */
export type ChatToolSession = {
  tools: ChatFunctionTool[];
  /** Per server, the tools listed (the answer's `mcp_list_tools` items). */
  listed: Array<{ server: string; tools: Tool[] }>;
  /** Whether a function name the model called is one of these MCP tools. */
  has(name: string): boolean;
  /** Runs the call through the MCP gateway (governed, recorded); an error becomes the tool's answer to the model. */
  call(name: string, args: string, signal: AbortSignal): Promise<McpCallRecord>;
  close(): Promise<void>;
};

/** Text of a tool result for the model: its text parts, else the content as JSON. */
function resultText(result: CallToolResult): string {
  const parts = result.content ?? [];
  const texts = parts.map((p) => (p.type === 'text' ? p.text : JSON.stringify(p)));
  return texts.join('\n');
}

/**
 * Opens the MCP side of one chat request: the servers it names, with the
 * caller's key's policy, through the same listing and calls as `POST /mcp`
 * (so every tool call is a ledger record), on upstream sessions of its own
 * that end with the request. An unknown server (or one the key may not use)
 * is a 400 naming it.
 */
export async function openChatTools(
  gateway: McpGateway,
  owner: SessionOwner,
  requested: McpToolRequest[],
): Promise<ChatToolSession> {
  const wantedServers = new Set(requested.map((r) => r.server));
  // Only the servers the request names are listed and connected.
  const rt = {
    ...gateway.runtime,
    servers: async (userId: string) =>
      (await gateway.runtime.servers(userId)).filter((s) => wantedServers.has(s.name)),
  };
  const pool = createUpstreamPool({
    timeoutMs: (s) => s.timeout_ms ?? rt.config.timeout_ms,
    fetchFor: rt.fetchFor,
  });
  const ctx: CatalogContext = { rt, owner, pool, catalog: emptyCatalog() };
  const known = new Set((await rt.servers(owner.userId)).map((s) => s.name));
  for (const r of requested) {
    if (!known.has(r.server)) {
      await pool.closeAll();
      throw new AppError('mcp_server_not_found', {
        message: `MCP server '${r.server.slice(0, 64)}' is not registered`,
        details: [{ path: 'tools.server_label', message: 'names no MCP server of this gateway' }],
      });
    }
  }
  const all = await listTools(ctx);
  const wanted = (name: string) => {
    const entry = ctx.catalog.tools.get(name);
    const r = entry && requested.find((q) => q.server === entry.server.name);
    return r !== undefined && (r.allowedTools === null || r.allowedTools.includes(entry?.tool ?? ''));
  };
  const offered = all.filter((t) => wanted(t.name));
  const names = new Set(offered.map((t) => t.name));
  const listed = requested.map((r) => ({
    server: r.server,
    tools: offered
      .filter((t) => ctx.catalog.tools.get(t.name)?.server.name === r.server)
      .map((t) => ({ ...t, name: ctx.catalog.tools.get(t.name)?.tool ?? t.name })),
  }));
  return {
    tools: offered.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.inputSchema as Record<string, unknown>,
      },
    })),
    listed,
    has: (name) => names.has(name),
    async call(name, args, signal) {
      const entry = ctx.catalog.tools.get(name);
      const record = { server: entry?.server.name ?? '', tool: entry?.tool ?? name, arguments: args };
      let parsed: Record<string, unknown>;
      try {
        parsed = args.trim() === '' ? {} : (JSON.parse(args) as Record<string, unknown>);
      } catch {
        return { ...record, output: null, error: 'the arguments are not JSON' };
      }
      try {
        const result = await callTool(ctx, { name, arguments: parsed }, signal);
        const text = resultText(result);
        return result.isError
          ? { ...record, output: null, error: text }
          : { ...record, output: text, error: null };
      } catch (err) {
        return {
          ...record,
          output: null,
          error: err instanceof McpError ? err.message : 'the tool call failed',
        };
      }
    },
    close: () => pool.closeAll(),
  };
}
