import {
  type ListMcpPoliciesResponse,
  type McpPolicyView,
  ZMcpPolicyId,
  ZSetMcpPolicyRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { findOwnedApiKey } from '../api-keys/repo';
import { requireAuthOf } from '../auth/api-key-auth';
import type { PrismaClient } from '../generated/prisma/client';
import { deletePolicy, listPolicies, type McpPolicyRow, upsertPolicy } from './policy-repo';

function toView(p: McpPolicyRow): McpPolicyView {
  return {
    scope: p.scope,
    subject: p.subject,
    allow: p.allow,
    deny: p.deny,
    updated_at: p.updatedAt.toISOString(),
  };
}

/**
 * `/api/v1/mcp/policies`: which MCP servers and tools each of the caller's
 * keys and projects may use. Reading takes a session or a key; changing takes
 * a signed-in session (with the Origin check), so a leaked key cannot widen
 * its own access. A change applies to open MCP sessions within the policy
 * cache time.
 */
export function createMcpPolicyRouter(opts: {
  prisma: PrismaClient;
  /** Session or API key. */
  read: RequestHandler;
  /** Session only, then the Origin check. */
  write: RequestHandler[];
  invalidate: () => void;
}): Router {
  const router = Router();
  router.get('/api/v1/mcp/policies', opts.read, async (_req, res) => {
    const policies = await listPolicies(opts.prisma, requireAuthOf(res).userId);
    res.json({ policies: policies.map(toView) } satisfies ListMcpPoliciesResponse);
  });
  router.put('/api/v1/mcp/policies', ...opts.write, jsonBody('32kb'), async (req, res) => {
    const body = parseRequestPart(ZSetMcpPolicyRequest, req.body);
    const { userId } = requireAuthOf(res);
    if (body.scope === 'api_key' && !(await findOwnedApiKey(opts.prisma, userId, body.subject))) {
      throw new AppError('api_key_not_found');
    }
    const row = await upsertPolicy(opts.prisma, userId, body);
    opts.invalidate();
    res.json(toView(row));
  });
  router.delete('/api/v1/mcp/policies', ...opts.write, async (req, res) => {
    const id = parseRequestPart(ZMcpPolicyId, req.query);
    if (!(await deletePolicy(opts.prisma, requireAuthOf(res).userId, id))) throw new AppError('not_found');
    opts.invalidate();
    res.status(204).end();
  });
  return router;
}
