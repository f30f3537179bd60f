import { type RequestHandler, type Response, Router } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';
import type { SessionStore } from './sessions';

/** Longest project id a client may tag its session with (as the chat API's project_id). */
const MAX_PROJECT_ID = 128;
/** The project a session is recorded under when the client names none. */
export const DEFAULT_MCP_PROJECT = 'mcp';

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function projectOf(header: unknown): string | null {
  if (header === undefined) return DEFAULT_MCP_PROJECT;
  if (typeof header !== 'string' || header === '' || header.length > MAX_PROJECT_ID) return null;
  return header;
}

/**
 * `POST|GET|DELETE /mcp`: the MCP endpoint (Streamable HTTP), with the
 * caller's gateway API key (`Authorization: Bearer` or `x-api-key`). An
 * initialize without `Mcp-Session-Id` opens a session bound to that key and
 * to the project of `x-project-id`; every later request carries the id and
 * the same key. The SDK's transport does the protocol (SSE or JSON answers,
 * resumption with `Last-Event-ID`, DELETE).
 */
export function createMcpRouter(
  sessions: SessionStore,
  opts: { auth: RequestHandler; json: RequestHandler },
): Router {
  const router = Router();
  const handle: RequestHandler = async (req, res) => {
    const auth = requireAuthOf(res);
    if (auth.kind !== 'api_key') return jsonRpcError(res, 401, -32600, 'An API key is required');
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.get(id, auth.apiKeyId);
      if (!session) return jsonRpcError(res, 404, -32001, 'Session not found');
      sessions.track(session, res);
      await session.transport.handleRequest(req, res, req.body);
      return;
    }
    // The SDK's schemas load with the first session (issue 46: memory).
    const { isInitializeRequest } =
      require('@modelcontextprotocol/sdk/types.js') as typeof import('@modelcontextprotocol/sdk/types.js');
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      return jsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
    }
    const projectId = projectOf(req.headers['x-project-id']);
    if (projectId === null) {
      return jsonRpcError(res, 400, -32600, `x-project-id must be 1 to ${MAX_PROJECT_ID} characters`);
    }
    const session = await sessions.open({ userId: auth.userId, apiKeyId: auth.apiKeyId, projectId });
    sessions.track(session, res);
    await session.transport.handleRequest(req, res, req.body);
  };
  router.post('/mcp', opts.auth, opts.json, handle);
  router.get('/mcp', opts.auth, handle);
  router.delete('/mcp', opts.auth, handle);
  return router;
}
