import { OPENAI_DEFAULT_PROJECT_ID } from '@platform/contract';
import type { Logger } from '@platform/logging';
import { sendJson } from '@platform/service-kit';
import { type Request, type RequestHandler, Router } from 'express';
import { logUpstream, runAccounted } from '../ai/accounting';
import { completionUsage } from '../ai/chat';
import type { AiRuntime } from '../ai/runtime';
import { relayChatStream } from '../ai/streaming/relay';
import { completionId, createOpenAiCompletion } from './create-chat-completion';
import { createEmbeddings, prepareEmbeddings } from './embeddings/create-embeddings';
import { modelNotFound, openAiErrorHandler, openAiNotFound } from './errors';
import { listModels, resolveModel, toOpenAiModel, validModelsText } from './models';
import { prepareOpenAiChat } from './prepare';
import { createResponse, responseIdentity } from './responses/create-response';
import { prepareResponse } from './responses/prepare-response';
import { responsesStreamFormat } from './responses/stream-response';
import { openAiStreamFormat } from './stream-chat-completion';

export type OpenAiCompatGuards = {
  /** API key (x-api-key or Bearer), limits, body parser: the native chat guards. */
  chat: RequestHandler[];
  /** API key only: listing models costs nothing and is not rate limited. */
  read: RequestHandler[];
};

function projectHeader(req: Request): string | undefined {
  const value = req.headers['x-project-id'];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The OpenAI-compatible API, mounted at `/v1`: `POST /chat/completions`,
 * `POST /responses`, `POST /embeddings`, `GET /models`, `GET /models/{id}`. The same lanes, keys, limits, fallback,
 * usage records and metrics as `/api/v1/ai/chat/*`; every error, unknown
 * paths included, in OpenAI's shape.
 */
export function createOpenAiCompatRouter(
  rt: AiRuntime,
  opts: { guards: OpenAiCompatGuards; logger: Logger },
): Router {
  const router = Router();

  router.post('/v1/chat/completions', ...opts.guards.chat, async (req, res) => {
    const prepared = prepareOpenAiChat(rt, req.body, projectHeader(req));
    const { chat } = prepared;
    const request = {
      projectId: chat.projectId,
      endpoint: prepared.stream ? 'stream' : 'chat',
      lane: chat.lane,
      chat,
    };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal, requestId, finish }) => {
      const who = { id: completionId(requestId), created: Math.floor(rt.clock() / 1000), lane: chat.lane };
      if (prepared.stream) {
        const format = openAiStreamFormat(who, prepared.includeUsage);
        return relayChatStream(rt, chat, storedKeys, res, { clientSignal, format, finish });
      }
      const { response, result } = await createOpenAiCompletion(rt, chat, storedKeys, clientSignal, who);
      logUpstream(res, result);
      const outcome = { status: 200, ...completionUsage(chat, result) };
      await finish(outcome);
      sendJson(res, response);
      return outcome;
    });
  });

  router.post('/v1/responses', ...opts.guards.chat, async (req, res) => {
    const prepared = prepareResponse(rt, req.body, projectHeader(req));
    const { chat, request: asked } = prepared;
    const request = {
      projectId: chat.projectId,
      endpoint: prepared.stream ? 'responses-stream' : 'responses',
      lane: chat.lane,
      chat,
    };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal, requestId, finish }) => {
      const who = responseIdentity(requestId, chat.lane);
      if (prepared.stream) {
        const format = responsesStreamFormat(who, asked);
        return relayChatStream(rt, chat, storedKeys, res, { clientSignal, format, finish });
      }
      const { response, result } = await createResponse(rt, chat, storedKeys, clientSignal, who, asked);
      logUpstream(res, result);
      const outcome = { status: 200, ...completionUsage(chat, result) };
      await finish(outcome);
      sendJson(res, response);
      return outcome;
    });
  });

  router.post('/v1/embeddings', ...opts.guards.chat, async (req, res) => {
    const prepared = prepareEmbeddings(rt, req.body);
    const projectId = projectHeader(req) ?? OPENAI_DEFAULT_PROJECT_ID;
    const request = { projectId, endpoint: 'embeddings', lane: prepared.lane, targets: prepared.targets };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal, finish }) => {
      const { response, result } = await createEmbeddings(rt, prepared, storedKeys, clientSignal);
      logUpstream(res, result);
      const usage = {
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: 0,
        total_tokens: response.usage.total_tokens,
      };
      const outcome = { status: 200, target: result.target, usage };
      await finish(outcome);
      sendJson(res, response);
      return outcome;
    });
  });

  router.get('/v1/models', ...opts.guards.read, (_req, res) => {
    res.json(listModels(rt));
  });

  // Model ids contain `/` (`free/llama-3.3-70b-versatile`), hence the wildcard.
  router.get('/v1/models/*id', ...opts.guards.read, (req, res) => {
    const segments = (req.params as { id?: string[] }).id ?? [];
    const id = segments.join('/');
    if (!resolveModel(rt, id)) throw modelNotFound(id, validModelsText(rt));
    res.json(toOpenAiModel(id));
  });

  router.use('/v1', openAiNotFound());
  router.use('/v1', openAiErrorHandler({ logger: opts.logger }));
  return router;
}
