import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from './config';
import type { FetchLike } from './ssrf';

/** The gateway as an MCP client, as upstream servers see it. */
const CLIENT_INFO = { name: 'ai-gateway', version: '1.0.0' };

/**
 * One upstream MCP session: the SDK's Client on the server's transport, with
 * the server's credentials injected into every HTTP request (the client of
 * the gateway never sends or sees them). Redirects are refused, so a server
 * cannot bounce the gateway, credentials included, to another address.
 */
export type UpstreamSession = {
  client: Client;
  /** Ends the upstream session (a DELETE for Streamable HTTP) and the connection. */
  close(): Promise<void>;
};

function transportOf(
  server: McpServerConfig,
  fetch: FetchLike | undefined,
): Transport & { terminateSession?: () => Promise<void> } {
  const requestInit: RequestInit = { headers: { ...server.headers }, redirect: 'error' };
  const url = new URL(server.url);
  const opts = { requestInit, ...(fetch ? { fetch } : {}) };
  if (server.transport === 'sse') return new SSEClientTransport(url, opts);
  return new StreamableHTTPClientTransport(url, opts);
}

/** Opens a session (initialize) with `server`; rejects after `timeoutMs`. */
export async function openUpstreamSession(
  server: McpServerConfig,
  opts: { timeoutMs: number; onClose?: () => void; fetch?: FetchLike },
): Promise<UpstreamSession> {
  const transport = transportOf(server, opts.fetch);
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  client.onclose = opts.onClose;
  await client.connect(transport, { timeout: opts.timeoutMs });
  return {
    client,
    async close() {
      client.onclose = undefined;
      await transport.terminateSession?.().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}
