import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { type LoopbackServer, listenLoopback, readBody, sendJson } from './http-server';

/**
 * Real MCP servers (the SDK's McpServer) on loopback, for the gateway's MCP
 * tests. Each kind stands for a situation an MCP gateway meets upstream:
 * - `stateful`: `increment` counts per MCP session (a new session restarts at
 *   1, so a gateway that opens a session per call is seen), plus a resource
 *   and a prompt.
 * - `slow`: `sleep` waits `ms` before answering.
 * - `failing`: `fail` throws (an MCP error result), `crash` ends the HTTP
 *   response with a body that is not JSON-RPC.
 * - `long-names`: a tool whose name is 70 characters long, and `short`.
 * - `credentialed`: refuses (401) any request without the expected header;
 *   `whoami` answers the names of the headers that reached it.
 */
export type McpTestServerKind = 'stateful' | 'slow' | 'failing' | 'long-names' | 'credentialed';

export type McpTestServer = LoopbackServer & {
  /** The MCP endpoint: `<url>/mcp` (Streamable HTTP) or `<url>/sse` (HTTP+SSE). */
  endpoint: string;
  /** Headers of every HTTP request received, in order. */
  requests: Array<{ method: string; headers: IncomingMessage['headers'] }>;
  /** MCP sessions initialized so far. */
  sessionsOpened(): number;
};

export type McpTestServerOptions = {
  transport?: 'streamable-http' | 'sse';
  /** For `credentialed`: the header that must be present with this value. */
  credential?: { header: string; value: string };
};

/** The 70-character tool name of the `long-names` server. */
export const LONG_TOOL_NAME = `summarise_${'quarterly_revenue_by_region_'.repeat(2)}and_product`;

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

function registerStateful(server: McpServer): void {
  let count = 0;
  server.registerTool(
    'increment',
    { description: 'Adds one to this session counter', inputSchema: {} },
    async () => {
      count += 1;
      return text(String(count));
    },
  );
  server.registerTool(
    'echo',
    { description: 'Echoes its text', inputSchema: { text: z.string() } },
    async ({ text: t }) => text(t),
  );
  server.registerResource('readme', 'memo://readme', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'the stateful server readme' }],
  }));
  server.registerPrompt(
    'greet',
    { description: 'A greeting', argsSchema: { name: z.string() } },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello ${name}` } }] }),
  );
}

function registerKind(server: McpServer, kind: McpTestServerKind): void {
  if (kind === 'stateful') {
    registerStateful(server);
    return;
  }
  if (kind === 'slow') {
    server.registerTool('sleep', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms).unref());
      return text(`slept ${ms}`);
    });
    server.registerTool('big', { inputSchema: { bytes: z.number() } }, async ({ bytes }) =>
      text('x'.repeat(bytes)),
    );
    return;
  }
  if (kind === 'failing') {
    server.registerTool('fail', { inputSchema: {} }, async () => {
      throw new Error('the failing server failed');
    });
    server.registerTool('crash', { inputSchema: {} }, async () => text('never seen'));
    return;
  }
  if (kind === 'long-names') {
    server.registerTool(LONG_TOOL_NAME, { inputSchema: {} }, async () => text('long name answered'));
    server.registerTool('short', { inputSchema: {} }, async () => text('short answered'));
    return;
  }
  // Names only: the credential's value must never travel back towards the client.
  server.registerTool('whoami', { inputSchema: {} }, async (_args, extra) =>
    text(`authorized; headers: ${Object.keys(extra.requestInfo?.headers ?? {}).join(',')}`),
  );
}

function newServer(kind: McpTestServerKind): McpServer {
  const server = new McpServer({ name: `test-${kind}`, version: '1.0.0' });
  registerKind(server, kind);
  return server;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>;

function streamableHandler(kind: McpTestServerKind, opened: () => void): Handler {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return async (req, res, body) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res, body);
    if (typeof id === 'string') return sendJson(res, 404, { error: 'unknown session' });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        sessions.set(sid, transport);
        opened();
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await newServer(kind).connect(transport);
    await transport.handleRequest(req, res, body);
  };
}

function sseHandler(kind: McpTestServerKind, opened: () => void): Handler {
  const sessions = new Map<string, SSEServerTransport>();
  return async (req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      opened();
      await newServer(kind).connect(transport);
      return;
    }
    const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (!transport) return sendJson(res, 404, { error: 'unknown session' });
    await transport.handlePostMessage(req, res, body);
  };
}

/** `crash` of the failing server: a 200 whose body is not a JSON-RPC message. */
function isCrashCall(body: unknown): boolean {
  const b = body as { method?: unknown; params?: { name?: unknown } } | null;
  return b?.method === 'tools/call' && b.params?.name === 'crash';
}

/** Starts one MCP test server of `kind` on 127.0.0.1. */
export async function startMcpTestServer(
  kind: McpTestServerKind,
  opts: McpTestServerOptions = {},
): Promise<McpTestServer> {
  const requests: McpTestServer['requests'] = [];
  let opened = 0;
  const onOpened = () => {
    opened += 1;
  };
  const sse = opts.transport === 'sse';
  const handle = sse ? sseHandler(kind, onOpened) : streamableHandler(kind, onOpened);
  const server = await listenLoopback(async (req, res) => {
    requests.push({ method: req.method ?? '', headers: req.headers });
    const cred = opts.credential;
    if (kind === 'credentialed' && cred && req.headers[cred.header.toLowerCase()] !== cred.value) {
      return sendJson(res, 401, { error: 'missing or wrong credential' });
    }
    const raw = req.method === 'POST' ? (await readBody(req)).toString('utf8') : '';
    const body: unknown = raw ? JSON.parse(raw) : undefined;
    if (kind === 'failing' && isCrashCall(body)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"this is": not json-rpc');
      return;
    }
    await handle(req, res, body);
  });
  return {
    ...server,
    endpoint: `${server.url}${sse ? '/sse' : '/mcp'}`,
    requests,
    sessionsOpened: () => opened,
  };
}
