import { createHash } from 'node:crypto';

/** Between the server's name and the tool's in a namespaced name. */
export const NAME_SEPARATOR = '__';
/** The longest tool name some model providers accept (OpenAI, Anthropic: `^[a-zA-Z0-9_-]{1,64}$`). */
export const MAX_TOOL_NAME = 64;
const HASH_CHARS = 8;

/**
 * The name a client sees for `tool` of `server`: `<server>__<tool>`. When
 * that is longer than 64 characters or holds characters model providers
 * refuse, it is cut and given a hash of the full name, so it is the same on
 * every instance and every call, and two long names sharing a prefix stay
 * distinct. The gateway maps it back through the session's catalogue.
 */
export function exposedName(server: string, tool: string): string {
  const full = `${server}${NAME_SEPARATOR}${tool}`;
  const safe = full.replace(/[^A-Za-z0-9_-]/g, '_');
  if (safe === full && full.length <= MAX_TOOL_NAME) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, HASH_CHARS);
  return `${safe.slice(0, MAX_TOOL_NAME - HASH_CHARS - 1)}_${hash}`;
}

/** The server part of an exposed name (server names never contain `__`). */
export function serverOfExposed(name: string): string | undefined {
  const at = name.indexOf(NAME_SEPARATOR);
  return at > 0 ? name.slice(0, at) : undefined;
}
