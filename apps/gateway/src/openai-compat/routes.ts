import type { Logger } from '@platform/logging';
import { sendJson } from '@platform/service-kit';
import { type Request, type RequestHandler, Router } from 'express';
import { logUpstream, runAccounted } from '../ai/accounting';
import type { AiRuntime } from '../ai/runtime';
import { relayChatStream } from '../ai/stream';
import { completionId, createOpenAiCompletion } from './create-chat-completion';
import { modelNotFound, openAiErrorHandler, openAiNotFound } from './errors';
import { listModels, resolveModel, toOpenAiModel } from './models';
import { prepareOpenAiChat } from './prepare';
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
 * `GET /models`, `GET /models/{id}`. The same lanes, keys, limits, fallback,
 * usage records and metrics as `/api/v1/ai/chat/*`; every error, unknown
 * paths included, in OpenAI's shape.
 */
export function createOpenAiCompatRouter(
  rt: AiRuntime,
  opts: { guards: OpenAiCompatGuards; logger: Logger },
): Router {
  const router = Router();

  router.post('/chat/completions', ...opts.guards.chat, async (req, res) => {
    const prepared = prepareOpenAiChat(rt, req.body, projectHeader(req));
    const { chat } = prepared;
    const request = {
      projectId: chat.projectId,
      endpoint: prepared.stream ? 'stream' : 'chat',
      lane: chat.lane,
    };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal, requestId }) => {
      const who = { id: completionId(requestId), created: Math.floor(Date.now() / 1000), lane: chat.lane };
      if (prepared.stream) {
        const format = openAiStreamFormat(who, prepared.includeUsage);
        return relayChatStream(rt, chat, storedKeys, res, { clientSignal, format });
      }
      const { response, result } = await createOpenAiCompletion(rt, chat, storedKeys, clientSignal, who);
      logUpstream(res, result);
      sendJson(res, response);
      return { status: 200, target: result.target, usage: response.usage };
    });
  });

  router.get('/models', ...opts.guards.read, (_req, res) => {
    res.json(listModels(rt));
  });

  // Model ids contain `/` (`free/llama-3.3-70b-versatile`), hence the wildcard.
  router.get('/models/*id', ...opts.guards.read, (req, res) => {
    const segments = (req.params as { id?: string[] }).id ?? [];
    const id = segments.join('/');
    if (!resolveModel(rt, id)) throw modelNotFound(id);
    res.json(toOpenAiModel(id));
  });

  router.use(openAiNotFound());
  router.use(openAiErrorHandler({ logger: opts.logger }));
  return router;
}
