import { sendJson } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { logUpstream, runAccounted } from './accounting';
import { runChatCompletion, toChatCompletionResponse } from './chat';
import { prepareChat } from './chat-request';
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
    const request = { projectId: prepared.projectId, endpoint: 'chat', lane: prepared.lane };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal }) => {
      const result = await runChatCompletion(rt, prepared, storedKeys, clientSignal);
      const response = toChatCompletionResponse(result);
      logUpstream(res, result);
      sendJson(res, response);
      return { status: 200, target: result.target, usage: response.usage };
    });
  });

  router.post('/chat/stream', ...guards, async (req, res) => {
    const prepared = prepareChat(rt, req.body);
    const request = { projectId: prepared.projectId, endpoint: 'stream', lane: prepared.lane };
    await runAccounted(rt, res, request, ({ storedKeys, clientSignal, requestId }) =>
      streamChat(rt, prepared, storedKeys, res, { clientSignal, requestId }),
    );
  });

  return router;
}
