import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { emptyCatalog } from './catalog';
import { createSessionEventStore } from './event-store';
import type { McpRuntime, SessionOwner } from './runtime';
import { createUpstreamPool, type UpstreamPool } from './upstream-pool';

/** One client session: its transport, its MCP server, its upstream sessions. */
export type ClientSession = {
  owner: SessionOwner;
  transport: StreamableHTTPServerTransport;
  server: Server;
  pool: UpstreamPool;
  lastUsed: number;
  /** HTTP requests of this session still open (a call running, an SSE stream held): it is not idle. */
  inflight: number;
};

export type SessionStore = {
  /** The session with this id, if it is open and belongs to this key. */
  get(id: string, apiKeyId: string): ClientSession | undefined;
  /** Counts an HTTP request of the session until its response closes; the session is in use meanwhile. */
  track(session: ClientSession, res: { once(event: 'close', listener: () => void): unknown }): void;
  /** A new session for `owner`; kept once its initialize succeeded (the transport assigns its id). */
  open(owner: SessionOwner): Promise<ClientSession>;
  size(): number;
  close(): Promise<void>;
};

/**
 * The client sessions of this instance, by `Mcp-Session-Id`. A session is
 * bound to the API key that opened it (another key gets 404, as if it did
 * not exist), ends on the client's DELETE, after `session_idle_ms` unused,
 * or when `max_sessions` newer ones push it out; its upstream sessions end
 * with it. Sessions live in this process: a load balancer must send a
 * session's requests to one instance (docs/mcp.md).
 */
export function createSessionStore(rt: McpRuntime): SessionStore {
  const sessions = new Map<string, ClientSession>();
  const end = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    rt.metrics.sessions.set(sessions.size);
    await s.pool.closeAll();
    await s.transport.close().catch(() => {});
  };
  const sweep = () => {
    const idleBefore = rt.clock() - rt.config.session_idle_ms;
    for (const [id, s] of sessions) if (s.inflight === 0 && s.lastUsed < idleBefore) void end(id);
  };
  const timer = setInterval(sweep, Math.min(rt.config.session_idle_ms, 60_000));
  timer.unref();
  const evictOldest = () => {
    let oldest: [string, ClientSession] | undefined;
    for (const entry of sessions) if (!oldest || entry[1].lastUsed < oldest[1].lastUsed) oldest = entry;
    if (oldest) void end(oldest[0]);
  };
  return {
    get(id, apiKeyId) {
      const s = sessions.get(id);
      if (!s || s.owner.apiKeyId !== apiKeyId) return undefined;
      s.lastUsed = rt.clock();
      return s;
    },
    track(session, res) {
      session.inflight += 1;
      res.once('close', () => {
        session.inflight -= 1;
        session.lastUsed = rt.clock();
      });
    },
    async open(owner) {
      // The MCP SDK's server side loads with the first session, not at start (issue 46: memory).
      const { StreamableHTTPServerTransport } =
        require('@modelcontextprotocol/sdk/server/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js');
      const { createSessionServer } = require('./handlers') as typeof import('./handlers');
      const pool = createUpstreamPool({
        timeoutMs: (s) => s.timeout_ms ?? rt.config.timeout_ms,
        fetchFor: rt.fetchFor,
      });
      const session: ClientSession = {
        owner,
        pool,
        lastUsed: rt.clock(),
        inflight: 0,
        server: createSessionServer({ rt, owner, pool, catalog: emptyCatalog() }),
        transport: new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          eventStore: createSessionEventStore(),
          onsessioninitialized: (id) => {
            if (sessions.size >= rt.config.max_sessions) evictOldest();
            sessions.set(id, session);
            rt.metrics.sessions.set(sessions.size);
          },
          onsessionclosed: (id) => end(id),
        }),
      };
      session.transport.onclose = () => {
        const id = session.transport.sessionId;
        if (id) void end(id);
        else void pool.closeAll();
      };
      await session.server.connect(session.transport);
      return session;
    },
    size: () => sessions.size,
    async close() {
      clearInterval(timer);
      await Promise.all([...sessions.keys()].map(end));
    },
  };
}
