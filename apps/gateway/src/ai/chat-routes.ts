import { type RequestHandler, Router } from 'express';
import { type AccountingBase, callerOf, logUpstream, requestIdOf, withAccounting } from './accounting';
import { completeChat } from './chat';
import { prepareChat } from './chat-request';
import { clientAbortSignal } from './client-signal';
import type { AiRuntime } from './runtime';
import { streamChat } from './stream';

/**
 * `POST /chat/completions` and `POST /chat/stream`. `guards` run first (API
 * key, limits, body parser), so a request that is refused costs no parsing.
 */
export function createChatRouter(rt: AiRuntime, guards: RequestHandler[]): Router {
  const router = Router();

  router.post('/chat/completions', ...guards, async (req, res) => {
    const prepared = prepareChat(rt, req.body);
    const caller = callerOf(res);
    const base: AccountingBase = {
      requestId: requestIdOf(res),
      caller,
      projectId: prepared.projectId,
      endpoint: 'chat',
      lane: prepared.lane,
      startedAt: Date.now(),
    };
    const clientSignal = clientAbortSignal(res);
    await withAccounting(rt, base, async () => {
      const storedKeys = await rt.storedKeys(caller.userId);
      const { response, result } = await completeChat(rt, prepared, storedKeys, clientSignal);
      logUpstream(res, result);
      res.json(response);
      return { status: 200, target: result.target, usage: response.usage };
    });
  });

  router.post('/chat/stream', ...guards, async (req, res) => {
    const prepared = prepareChat(rt, req.body);
    const caller = callerOf(res);
    const requestId = requestIdOf(res);
    const base: AccountingBase = {
      requestId,
      caller,
      projectId: prepared.projectId,
      endpoint: 'stream',
      lane: prepared.lane,
      startedAt: Date.now(),
    };
    const clientSignal = clientAbortSignal(res);
    await withAccounting(rt, base, async () => {
      const storedKeys = await rt.storedKeys(caller.userId);
      const outcome = await streamChat(rt, prepared, storedKeys, res, { clientSignal, requestId });
      return { status: outcome.status, target: outcome.result.target, usage: outcome.usage };
    });
  });

  return router;
}
