import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * A server name is the prefix of its tools' names (`<server>__<tool>`): short,
 * lower case, and without `__`, so a namespaced name splits back unambiguously.
 */
export const SERVER_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

const ZHeaderName = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name');

/** One remote MCP server the operator registered in the MCP config file. */
export const ZMcpServerConfig = z.object({
  name: z.string().regex(SERVER_NAME_PATTERN, 'lower-case letters, digits and single dashes, at most 32'),
  /** The server's MCP endpoint. Only http(s): the gateway never runs a command (no stdio). */
  url: z.url({ protocol: /^https?$/ }),
  /** `streamable-http` (the current transport) or `sse` (the older HTTP+SSE transport). */
  transport: z.enum(['streamable-http', 'sse']).default('streamable-http'),
  /** Static credentials the gateway adds to every upstream request; clients never see them. */
  headers: z.record(ZHeaderName, z.string().max(8192)).default({}),
  /** Price of one tool call in AI_COST_CURRENCY units (e.g. 0.002); recorded and budgeted per call. */
  price_per_call: z.number().min(0).max(1000).default(0),
  /** Calls per minute to this server across all keys (per gateway deployment). */
  calls_per_minute: z.number().int().positive().optional(),
  /** Overrides the default time allowed for one call to this server. */
  timeout_ms: z.number().int().positive().max(600_000).optional(),
  /** Keys without an MCP policy see this server (true), or only keys whose policy allows it (false). */
  default_allowed: z.boolean().default(true),
});
export type McpServerConfig = z.infer<typeof ZMcpServerConfig> & {
  /** Set for a server a user registered (the user's id): its calls go through the SSRF guard. */
  owner?: string;
};

export const ZMcpConfig = z
  .object({
    servers: z.array(ZMcpServerConfig).max(100).default([]),
    /** Tool calls per minute per API key, across servers. */
    calls_per_minute_per_key: z.number().int().positive().default(600),
    /** Time allowed for one upstream call (connect, list or tool call). */
    timeout_ms: z.number().int().positive().max(600_000).default(60_000),
    /** Largest tool result (its JSON) passed to the client; a bigger one is an error for that call. */
    max_result_bytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * 1024),
    /** A client session unused this long is closed, with its upstream sessions. */
    session_idle_ms: z
      .number()
      .int()
      .positive()
      .default(30 * 60_000),
    /** Client sessions one gateway instance keeps; the least recently used is closed beyond it. */
    max_sessions: z.number().int().positive().default(10_000),
    /** Servers users register through the API (docs/mcp.md). */
    user_servers: z
      .object({
        enabled: z.boolean().default(true),
        /**
         * Hosts or addresses users may register although they are internal
         * (loopback, private networks); by default none.
         */
        allowed_hosts: z.array(z.string().min(1).max(253)).max(100).default([]),
        max_per_user: z.number().int().positive().max(1000).default(20),
      })
      .default({ enabled: true, allowed_hosts: [], max_per_user: 20 }),
    /**
     * Projects (the sessions' x-project-id) whose tool-call arguments and
     * results are written to the log, one line per call under the log
     * redaction rules, at most 64 KB each; by default none: nothing of them is kept.
     */
    payload_log_projects: z.array(z.string().min(1).max(128)).max(1000).default([]),
    /** Consecutive failures of a server that open its circuit, and how long it then stays open. */
    breaker: z
      .object({
        failures: z.number().int().positive().default(5),
        cooldown_ms: z.number().int().positive().default(30_000),
      })
      .default({ failures: 5, cooldown_ms: 30_000 }),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    for (const [i, s] of config.servers.entries()) {
      if (seen.has(s.name))
        ctx.addIssue({ code: 'custom', path: ['servers', i, 'name'], message: 'duplicate' });
      seen.add(s.name);
    }
  });
export type McpConfig = z.infer<typeof ZMcpConfig>;

export class McpConfigError extends Error {
  constructor(source: string, problems: string[]) {
    super(`invalid MCP config (${source}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'McpConfigError';
  }
}

export function parseMcpConfig(raw: unknown, source: string): McpConfig {
  const result = ZMcpConfig.safeParse(raw);
  if (!result.success) {
    throw new McpConfigError(
      source,
      result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  }
  return result.data;
}

/** Reads MCP_CONFIG once at start; unset -> no servers (the /mcp endpoint lists nothing). */
export function loadMcpConfig(path: string | undefined): McpConfig {
  if (!path) return parseMcpConfig({}, 'none');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new McpConfigError(path, [`cannot read JSON: ${err instanceof Error ? err.message : String(err)}`]);
  }
  return parseMcpConfig(raw, path);
}
