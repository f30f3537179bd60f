import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpServerConfig } from './config';
import type { FetchLike } from './ssrf';
import type { UpstreamSession } from './upstream';

/**
 * The upstream sessions of one client session: at most one per server,
 * opened on first use and kept for the client session's life, so a stateful
 * server sees one session from the first call to the last (LiteLLM #20242:
 * a session per operation breaks them). A session the server ended, or one
 * whose transport failed, is dropped and the next use opens a new one.
 */
export type UpstreamPool = {
  client(server: McpServerConfig): Promise<Client>;
  /** Forgets the server's session after a failure of its transport (it is closed). */
  drop(server: string): void;
  closeAll(): Promise<void>;
};

export function createUpstreamPool(opts: {
  timeoutMs: (server: McpServerConfig) => number;
  /** The fetch of a server's requests (the SSRF guard for user-registered ones). */
  fetchFor: (server: McpServerConfig) => FetchLike | undefined;
}): UpstreamPool {
  const sessions = new Map<string, Promise<UpstreamSession>>();
  let closed = false;
  const drop = (name: string) => {
    const session = sessions.get(name);
    sessions.delete(name);
    session?.then((s) => s.close()).catch(() => {});
  };
  return {
    async client(server) {
      if (closed) throw new Error('the client session is closed');
      let session = sessions.get(server.name);
      if (!session) {
        // The MCP SDK's client side loads with the first upstream session (issue 46: memory).
        const { openUpstreamSession } = require('./upstream') as typeof import('./upstream');
        session = openUpstreamSession(server, {
          timeoutMs: opts.timeoutMs(server),
          fetch: opts.fetchFor(server),
          onClose: () => {
            if (sessions.get(server.name) === session) sessions.delete(server.name);
          },
        });
        sessions.set(server.name, session);
        session.catch(() => {
          if (sessions.get(server.name) === session) sessions.delete(server.name);
        });
      }
      return (await session).client;
    },
    drop,
    async closeAll() {
      closed = true;
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((s) => s.then((u) => u.close()).catch(() => {})));
    },
  };
}
