import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { RequestHandler, Router } from 'express';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { callerOf } from '../../admission/caller';
import type { ResponsesCompletion } from '../../ai/providers/responses-translate';
import type { AiRuntime } from '../../ai/runtime';
import type { McpGateway } from '../../mcp/gateway';
import { header, runChatRoute } from '../chat-route';
import {
  outputMessage,
  passThroughResponse,
  type ResponseAnswer,
  responseIdentity,
  toResponse,
} from './create-response';
import { mcpToolsOf, runResponseWithMcp } from './mcp-loop';
import { prepareResponse, type StoredConversations } from './prepare-response';
import type { ResponseStore } from './store';
import { responsesStreamFormat } from './stream-response';

/** 404 as OpenAI answers an id it does not know (also another user's). */
function responseNotFound(id: string): AppError {
  const shown = id.length > 64 ? `${id.slice(0, 64)}...` : id;
  return new AppError('not_found', { message: `Response with id '${shown}' not found.` });
}

function idParam(params: unknown): string {
  const id = (params as { id?: unknown }).id;
  return typeof id === 'string' ? id : '';
}

/**
 * `POST /v1/responses`, and with a store (RESPONSES_RETENTION_DAYS > 0)
 * `GET` and `DELETE /v1/responses/{id}`: a `store: true` answer is kept for
 * the key's user before it is sent (the stream's before its last event), and
 * `previous_response_id` continues one of the caller's kept responses on any
 * target. Another user's id reads as missing.
 */
export function addResponsesRoutes(
  router: Router,
  rt: AiRuntime,
  opts: {
    chat: RequestHandler[];
    read: RequestHandler[];
    store: ResponseStore | null;
    logger: Logger;
    /** The MCP gateway, for tools of type mcp (mcp-loop.ts). */
    mcp?: McpGateway;
  },
): void {
  const { store } = opts;
  router.post('/v1/responses', ...opts.chat, async (req, res) => {
    const userId = callerOf(res).userId;
    const stored: StoredConversations | undefined = store
      ? {
          load: async (id) =>
            ((await store.find(userId, id))?.messages as ChatCompletionMessageParam[] | undefined) ?? null,
        }
      : undefined;
    const prepared = await prepareResponse(rt, req.body, header(req, 'x-project-id'), stored);
    const mcpTools = opts.mcp ? mcpToolsOf(prepared.request) : [];
    if (opts.mcp && mcpTools.length > 0) return runResponseWithMcp(rt, opts.mcp, res, prepared, mcpTools);
    const asked = prepared.request;
    const keep =
      prepared.store && store
        ? async (answer: ResponseAnswer) => {
            const messages = [...prepared.conversation, outputMessage(answer.output)];
            await store.save(userId, answer.id, { response: answer, messages }).catch((err: unknown) => {
              // The answer is paid for and goes out; only continuing from it will fail.
              opts.logger.error(
                { error: err instanceof Error ? err.message : String(err) },
                'response not stored',
              );
            });
          }
        : undefined;
    await runChatRoute(rt, res, prepared, {
      endpoint: 'responses',
      streamEndpoint: 'responses-stream',
      identity: (requestId) => responseIdentity(requestId, prepared.chat.lane),
      streamFormat: (who) => responsesStreamFormat(who, asked, keep),
      answer: (completion, target, who) => {
        const original = (completion as Partial<ResponsesCompletion>).responses;
        return original
          ? passThroughResponse(original, target.model, who)
          : toResponse(completion, target.model, who, asked, keep !== undefined);
      },
      beforeSend: keep ? (answer) => keep(answer as ResponseAnswer) : undefined,
    });
  });

  if (!store) return;
  router.get('/v1/responses/:id', ...opts.read, async (req, res) => {
    const id = idParam(req.params);
    const row = await store.find(callerOf(res).userId, id);
    if (!row) throw responseNotFound(id);
    res.json(row.response);
  });
  router.delete('/v1/responses/:id', ...opts.read, async (req, res) => {
    const id = idParam(req.params);
    if (!(await store.remove(callerOf(res).userId, id))) throw responseNotFound(id);
    res.json({ id, object: 'response', deleted: true });
  });
}
