import { OPENAI_DEFAULT_PROJECT_ID } from '@platform/contract';
import type { Logger } from '@platform/logging';
import { type RequestHandler, Router } from 'express';
import { admissionBeforeError } from '../admission/pending';
import { jsonAnswer, logUpstream, runAccounted } from '../ai/accounting';
import type { Target } from '../ai/config/lanes';
import type { AiRuntime } from '../ai/runtime';
import type { McpGateway } from '../mcp/gateway';
import { header, runChatRoute } from './chat-route';
import { completionId, passThroughCompletion, toOpenAiCompletion } from './create-chat-completion';
import { createEmbeddings, estimateEmbeddingInput, prepareEmbeddings } from './embeddings/create-embeddings';
import { modelNotFound, openAiErrorHandler, openAiNotFound } from './errors';
import { listModels, resolveModel, toOpenAiModel, validModelsText } from './models';
import { prepareOpenAiChat } from './prepare';
import { mcpToolsOf, runChatWithMcp } from './responses/mcp-loop';
import { addResponsesRoutes } from './responses/routes';
import type { ResponseStore } from './responses/store';
import { openAiStreamFormat } from './stream-chat-completion';

export type OpenAiCompatGuards = {
  /** API key (x-api-key or Bearer), limits, body parser: the native chat guards. */
  chat: RequestHandler[];
  /** API key only: listing models costs nothing and is not rate limited. */
  read: RequestHandler[];
};

/**
 * The OpenAI-compatible API, mounted at `/v1`: `POST /chat/completions`,
 * `POST /responses` (and `GET`/`DELETE /responses/{id}`), `POST /embeddings`, `GET /models`, `GET /models/{id}`. The same lanes, keys, limits, fallback,
 * usage records and metrics as `/api/v1/ai/chat/*`; every error, unknown
 * paths included, in OpenAI's shape.
 *
 * Over 80 lines: OpenAI's path list in one place, each route a few lines.
 */
export function createOpenAiCompatRouter(
  rt: AiRuntime,
  opts: {
    guards: OpenAiCompatGuards;
    logger: Logger;
    responses: ResponseStore | null;
    /** The MCP gateway: `/v1/responses` runs tools of type mcp through it. */
    mcp?: McpGateway;
  },
): Router {
  const router = Router();
  /** Same protocol: the target's answers go to the client as sent, `model` aside (docs: Field policy). */
  const speaksOpenAi = (target: Target) => rt.catalog.get(target.provider)?.api === 'openai-compatible';

  router.post('/v1/chat/completions', ...opts.guards.chat, async (req, res) => {
    const prepared = prepareOpenAiChat(rt, req.body, header(req, 'x-project-id'));
    const mcpTools = opts.mcp ? mcpToolsOf(prepared.chat.params) : [];
    if (opts.mcp && mcpTools.length > 0) {
      // The gateway's tool loop (docs/mcp.md): the answer is translated, with the calls in `mcp_calls`.
      return runChatWithMcp(rt, opts.mcp, res, prepared, mcpTools, {
        endpoint: 'chat',
        answer: (completion, target, requestId, items) => ({
          ...toOpenAiCompletion(completion, target, {
            id: completionId(requestId),
            created: Math.floor(rt.clock() / 1000),
            lane: prepared.chat.lane,
          }),
          mcp_calls: items.filter((i) => i.type === 'mcp_call'),
        }),
      });
    }
    await runChatRoute(rt, res, prepared, {
      endpoint: 'chat',
      streamEndpoint: 'stream',
      identity: (requestId) => ({
        id: completionId(requestId),
        created: Math.floor(rt.clock() / 1000),
        lane: prepared.chat.lane,
      }),
      streamFormat: (who) => openAiStreamFormat(who, prepared.includeUsage, speaksOpenAi),
      answer: (completion, target, who) =>
        speaksOpenAi(target)
          ? passThroughCompletion(completion, target, who)
          : toOpenAiCompletion(completion, target, who),
    });
  });

  addResponsesRoutes(router, rt, {
    ...opts.guards,
    store: opts.responses,
    logger: opts.logger,
    ...(opts.mcp ? { mcp: opts.mcp } : {}),
  });

  router.post('/v1/embeddings', ...opts.guards.chat, async (req, res) => {
    const prepared = prepareEmbeddings(rt, req.body);
    const projectId = header(req, 'x-project-id') ?? OPENAI_DEFAULT_PROJECT_ID;
    const request = {
      projectId,
      endpoint: 'embeddings',
      lane: prepared.lane,
      targets: prepared.targets,
      inputTokens: estimateEmbeddingInput(prepared.request.input),
    };
    await runAccounted(rt, res, request, async ({ storedKeys, clientSignal }) => {
      const { response, result } = await createEmbeddings(rt, prepared, storedKeys, clientSignal);
      logUpstream(res, result);
      const usage = {
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: 0,
        total_tokens: response.usage.total_tokens,
      };
      return jsonAnswer(res, { status: 200, target: result.target, usage }, response);
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
  router.use('/v1', admissionBeforeError(openAiErrorHandler({ logger: opts.logger })));
  return router;
}
