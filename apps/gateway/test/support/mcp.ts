import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { type McpTestServer, type McpTestServerKind, startMcpTestServer } from '@platform/testing';
import { writeTempJson } from './ai-harness';

/** The credential the `credentialed` test server requires; only the gateway's config holds it. */
export const UPSTREAM_SECRET = 'upstream-secret-7f3a9c';

export type McpFleet = Record<string, McpTestServer> & {
  /** MCP_CONFIG for a gateway using every server of the fleet. */
  configFile(extra?: Record<string, unknown>, servers?: Record<string, Record<string, unknown>>): string;
  close(): Promise<void>;
};

/** Starts one test server per entry: name -> kind (and transport). */
export async function startMcpFleet(
  kinds: Record<string, { kind: McpTestServerKind; transport?: 'streamable-http' | 'sse' }>,
): Promise<McpFleet> {
  const servers: Record<string, McpTestServer> = {};
  for (const [name, { kind, transport }] of Object.entries(kinds)) {
    servers[name] = await startMcpTestServer(kind, {
      transport,
      credential: { header: 'x-upstream-key', value: UPSTREAM_SECRET },
    });
  }
  const all = Object.values(servers);
  return Object.assign(servers, {
    configFile(extra: Record<string, unknown> = {}, overrides: Record<string, Record<string, unknown>> = {}) {
      const list = Object.entries(kinds).map(([name, { kind, transport }]) => ({
        name,
        url: servers[name]?.endpoint,
        transport: transport ?? 'streamable-http',
        ...(kind === 'credentialed' ? { headers: { 'x-upstream-key': UPSTREAM_SECRET } } : {}),
        ...overrides[name],
      }));
      return writeTempJson('mcp.json', { servers: list, ...extra });
    },
    async close() {
      for (const s of all) await s.close();
    },
  }) as McpFleet;
}

/** An MCP SDK client connected to the gateway's /mcp with a gateway API key. */
export async function connectGatewayClient(
  gatewayUrl: string,
  apiKey: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}`, ...headers } },
  });
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content;
  return content?.[0]?.text ?? '';
}

/** The MCP error a promise rejected with (fails the test if it resolved or threw something else). */
export async function mcpErrorOf(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('expected an MCP error, the call succeeded');
}
