import type { Logger } from '@platform/logging';
import { sendJson } from '@platform/service-kit';
import { type Request, type RequestHandler, Router } from 'express';
import { logUpstream, runAccounted } from '../../ai/accounting';
import { completionUsage } from '../../ai/chat';
import type { AiRuntime } from '../../ai/runtime';
import { relayChatStream } from '../../ai/streaming/relay';
import { createMessage, messageId } from './create-message';
import { anthropicErrorHandler } from './errors';
import { prepareMessages } from './prepare-message';
import { anthropicStreamFormat } from './stream-message';

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Anthropic's Messages API, mounted before the OpenAI-compatible router:
 * `POST /v1/messages` on the same lanes, keys (`x-api-key` as Anthropic
 * clients send it, or Bearer), limits, fallback, usage records and metrics;
 * its errors in Anthropic's shape. Other paths fall through to the
 * OpenAI-compatible router.
 */
export function createMessagesRouter(
  rt: AiRuntime,
  opts: { guards: RequestHandler[]; logger: Logger },
): Router {
  const router = Router();
  router.post('/v1/messages', ...opts.guards, async (req, res) => {
    const prepared = prepareMessages(rt, req.body, {
      projectId: header(req, 'x-project-id'),
      beta: header(req, 'anthropic-beta'),
    });
    const { chat } = prepared;
    const request = {
      projectId: chat.projectId,
      endpoint: prepared.stream ? 'messages-stream' : 'messages',
      lane: chat.lane,
      chat,
    };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal, requestId, finish }) => {
      const who = { id: messageId(requestId), lane: chat.lane };
      if (prepared.stream) {
        return relayChatStream(rt, chat, storedKeys, res, {
          clientSignal,
          format: anthropicStreamFormat(who),
          finish,
        });
      }
      const { response, result } = await createMessage(rt, chat, storedKeys, clientSignal, who);
      logUpstream(res, result);
      const outcome = { status: 200, ...completionUsage(chat, result) };
      await finish(outcome);
      sendJson(res, response);
      return outcome;
    });
  });
  // Only errors of the route above reach this; unmatched paths go on to the next router.
  router.use('/v1/messages', anthropicErrorHandler({ logger: opts.logger }));
  return router;
}
