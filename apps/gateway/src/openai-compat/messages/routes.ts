import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import { sendJson } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { admitUnreserved } from '../../admission/admit';
import { admissionBeforeError } from '../../admission/pending';
import { clientAbortSignal } from '../../ai/client-signal';
import type { AiRuntime } from '../../ai/runtime';
import { header, runChatRoute } from '../chat-route';
import { modelNotFound } from '../errors';
import { resolveModel, validModelsText } from '../models';
import { countMessageTokens, prepareCountTokens } from './count-tokens';
import { messageId, toMessagesAnswer } from './create-message';
import { anthropicErrorHandler } from './errors';
import { listAnthropicModels, toAnthropicModel } from './models';
import { prepareMessages } from './prepare-message';
import { anthropicStreamFormat } from './stream-message';

/** Says where a count came from: `provider` (Anthropic's count_tokens) or `estimate` (our tokenizer). */
export const TOKEN_COUNT_HEADER = 'x-gateway-token-count';

/**
 * Anthropic's API on the same lanes, keys (`x-api-key` as Anthropic clients
 * send it, or Bearer), limits, fallback, usage records and metrics, mounted
 * before the OpenAI-compatible router: `POST /v1/messages`,
 * `POST /v1/messages/count_tokens`, and `GET /v1/models` (and `/{id}`) in
 * Anthropic's shape when the request carries `anthropic-version` (Anthropic's
 * SDKs send it on every request, OpenAI's never do). Its errors,
 * and unknown paths under /v1/messages, are in Anthropic's shape; other
 * requests fall through to the OpenAI-compatible router.
 */
export function createMessagesRouter(
  rt: AiRuntime,
  opts: { guards: RequestHandler[]; read: RequestHandler[]; logger: Logger },
): Router {
  const router = Router();
  const anthropicErrors = anthropicErrorHandler({ logger: opts.logger });
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

  // Free at Anthropic and here (nothing reserved or recorded); the key's rate limit applies.
  router.post('/v1/messages/count_tokens', ...opts.guards, async (req, res) => {
    const caller = await admitUnreserved(res);
    const prepared = prepareCountTokens(rt, req.body);
    const count = await countMessageTokens(rt, prepared, {
      storedKeys: await rt.storedKeys(caller.userId),
      clientSignal: clientAbortSignal(res),
      beta: header(req, 'anthropic-beta'),
    });
    res.setHeader(TOKEN_COUNT_HEADER, count.source);
    sendJson(res, { input_tokens: count.input_tokens });
  });

  // The model routes match only for Anthropic clients, decided before any route
  // decodes the path: otherwise a path the router cannot decode (`%E0%A4%A`)
  // would fail here and skip the OpenAI-compatible router and its error shape.
  const models = Router();
  models.use('/v1/models', (req, _res, next) => {
    if (req.headers['anthropic-version'] === undefined) next('router');
    else next();
  });
  models.get('/v1/models', ...opts.read, (req, res) => {
    sendJson(res, listAnthropicModels(rt, req.query as Record<string, unknown>));
  });
  models.get('/v1/models/*id', ...opts.read, (req, res) => {
    const id = ((req.params as { id?: string[] }).id ?? []).join('/');
    if (!resolveModel(rt, id)) throw modelNotFound(id, validModelsText(rt));
    sendJson(res, toAnthropicModel(id));
  });
  models.use(anthropicErrors);
  router.use(models);

  // Anthropic's other APIs under /v1/messages (batches) are not provided: 404 in its shape.
  router.use('/v1/messages', (req, _res, next) => {
    next(
      new AppError('not_found', {
        message: `Not found: ${req.method} /v1/messages${req.path.slice(0, 200)}`,
      }),
    );
  });
  router.use('/v1/messages', admissionBeforeError(anthropicErrors));
  return router;
}
