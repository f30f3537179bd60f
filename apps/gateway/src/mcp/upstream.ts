import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from './config';

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

function transportOf(server: McpServerConfig): Transport & { terminateSession?: () => Promise<void> } {
  const requestInit: RequestInit = { headers: { ...server.headers }, redirect: 'error' };
  const url = new URL(server.url);
  if (server.transport === 'sse') return new SSEClientTransport(url, { requestInit });
  return new StreamableHTTPClientTransport(url, { requestInit });
}

/** Opens a session (initialize) with `server`; rejects after `timeoutMs`. */
export async function openUpstreamSession(
  server: McpServerConfig,
  opts: { timeoutMs: number; onClose?: () => void },
): Promise<UpstreamSession> {
  const transport = transportOf(server);
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
