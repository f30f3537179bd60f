/**
 * Which MCP servers and tools an API key may list and call. Each entry names
 * a whole server (`notes`), one tool (`notes/search`) or the tools starting
 * with a prefix (`notes/read_*`), by the server's own tool names. Deny wins
 * over allow. With no `allow` list, a key sees the servers the operator marked
 * `default_allowed` (all by default); with one, only what it names.
 */
export type McpPolicy = { allow: string[] | null; deny: string[] };

/** The policy of a key that has none set. */
export const DEFAULT_POLICY: McpPolicy = { allow: null, deny: [] };

/** A policy entry: `server`, `server/tool` or `server/prefix*`. */
export const POLICY_ENTRY = /^[a-z0-9-]{1,32}(\/[A-Za-z0-9_.\-/]{1,128}\*?|\/\*)?$/;

function split(entry: string): { server: string; tool: string | null } {
  const at = entry.indexOf('/');
  return at < 0 ? { server: entry, tool: null } : { server: entry.slice(0, at), tool: entry.slice(at + 1) };
}

function matchesTool(entry: string, server: string, tool: string): boolean {
  const e = split(entry);
  if (e.server !== server) return false;
  if (e.tool === null || e.tool === '*') return true;
  return e.tool.endsWith('*') ? tool.startsWith(e.tool.slice(0, -1)) : e.tool === tool;
}

function deniesServer(policy: McpPolicy, server: string): boolean {
  return policy.deny.some((entry) => {
    const e = split(entry);
    return e.server === server && (e.tool === null || e.tool === '*');
  });
}

/** Whether the key may use the server at all (its resources and prompts, and any of its tools). */
export function serverAllowed(
  policy: McpPolicy,
  server: { name: string; default_allowed: boolean },
): boolean {
  if (deniesServer(policy, server.name)) return false;
  if (policy.allow === null) return server.default_allowed;
  return policy.allow.some((entry) => split(entry).server === server.name);
}

/** Whether the key may list and call this tool of the server. */
export function toolAllowed(
  policy: McpPolicy,
  server: { name: string; default_allowed: boolean },
  tool: string,
): boolean {
  if (!serverAllowed(policy, server)) return false;
  if (policy.deny.some((entry) => matchesTool(entry, server.name, tool))) return false;
  if (policy.allow === null) return true;
  return policy.allow.some((entry) => matchesTool(entry, server.name, tool));
}

/**
 * The policies in force for a session (its key's, its project's): each must
 * allow. No policy at all: the default.
 */
export type PolicySet = readonly McpPolicy[];

export function serverAllowedBy(
  policies: PolicySet,
  server: { name: string; default_allowed: boolean },
): boolean {
  if (policies.length === 0) return serverAllowed(DEFAULT_POLICY, server);
  return policies.every((p) => serverAllowed(p, server));
}

export function toolAllowedBy(
  policies: PolicySet,
  server: { name: string; default_allowed: boolean },
  tool: string,
): boolean {
  if (policies.length === 0) return toolAllowed(DEFAULT_POLICY, server, tool);
  return policies.every((p) => toolAllowed(p, server, tool));
}
