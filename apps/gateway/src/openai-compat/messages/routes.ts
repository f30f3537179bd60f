import type { Logger } from '@platform/logging';
import { type RequestHandler, Router } from 'express';
import type { AiRuntime } from '../../ai/runtime';
import { admissionBeforeError } from '../../auth/pending-admission';
import { header, runChatRoute } from '../chat-route';
import { messageId, toMessagesAnswer } from './create-message';
import { anthropicErrorHandler } from './errors';
import { prepareMessages } from './prepare-message';
import { anthropicStreamFormat } from './stream-message';

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
    await runChatRoute(rt, res, prepared, {
      endpoint: 'messages',
      streamEndpoint: 'messages-stream',
      identity: (requestId) => ({ id: messageId(requestId), lane: prepared.chat.lane }),
      streamFormat: anthropicStreamFormat,
      answer: toMessagesAnswer,
    });
  });
  // Only errors of the route above reach this; unmatched paths go on to the next router.
  router.use('/v1/messages', admissionBeforeError(anthropicErrorHandler({ logger: opts.logger })));
  return router;
}
