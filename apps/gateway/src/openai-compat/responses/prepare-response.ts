import {
  checkChatRules,
  OPENAI_DEFAULT_PROJECT_ID,
  type ResponsesRequest,
  ZResponsesRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { PreparedChat } from '../../ai/chat-request';
import { selectTargets } from '../../ai/config/lanes';
import { chatParamsFor } from '../../ai/field-policy';
import type { AiRuntime } from '../../ai/runtime';
import { modelNotFound, unsupportedParameter } from '../errors';
import { resolveModel } from '../models';
import { toChatParams, toMessages } from './translate-request';

/** A `POST /v1/responses` body turned into the shared chat input, plus what the answer echoes. */
export type PreparedResponse = {
  chat: PreparedChat;
  stream: boolean;
  request: ResponsesRequest;
  /** The conversation without instructions (a previous response's, then this input): what a stored response keeps. */
  conversation: ChatCompletionMessageParam[];
  /** `store: true` and storing is on: the answer is kept. */
  store: boolean;
};

/** How stored responses are reached; absent when storing is off (RESPONSES_RETENTION_DAYS=0). */
export type StoredConversations = {
  /** The conversation through a stored response of the caller; null when the caller has none by that id. */
  load(id: string): Promise<ChatCompletionMessageParam[] | null>;
};

/** The conversation `previous_response_id` names: 404 as OpenAI answers when it is not the caller's. */
async function previousConversation(
  request: ResponsesRequest,
  stored: StoredConversations | undefined,
): Promise<ChatCompletionMessageParam[]> {
  const id = request.previous_response_id;
  if (id == null) return [];
  if (!stored) {
    throw unsupportedParameter(
      'previous_response_id',
      'previous_response_id is not supported: storing responses is off on this gateway; send the whole conversation in input.',
    );
  }
  const messages = await stored.load(id);
  if (messages) return messages;
  const shown = id.length > 64 ? `${id.slice(0, 64)}...` : id;
  const message = `Previous response with id '${shown}' not found.`;
  throw new AppError('not_found', { message, details: [{ path: 'previous_response_id', message }] });
}

/** Chat field names as the Responses API calls them, for the dropped-params header. */
const RESPONSES_NAMES: Readonly<Record<string, string>> = {
  reasoning_effort: 'reasoning.effort',
  response_format: 'text.format',
  max_tokens: 'max_output_tokens',
  max_completion_tokens: 'max_output_tokens',
};

function textOf(m: ChatCompletionMessageParam): string {
  const content = m.content;
  const text =
    typeof content === 'string'
      ? content
      : (content ?? []).map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join('');
  if (m.role !== 'assistant') return text;
  return text + (m.tool_calls ?? []).map((c) => ('function' in c ? c.function.arguments : '')).join('');
}

/**
 * Validates a Responses request: shape (422), model (404), then the chat
 * rules of every AI route; the input becomes chat messages for the lane's
 * targets. Fields with no chat equivalent are dropped and named per target
 * (docs/gateway-ai.md#field-policy).
 */
export async function prepareResponse(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes' | 'catalog'>,
  body: unknown,
  projectHeader: string | undefined,
  stored?: StoredConversations,
): Promise<PreparedResponse> {
  const request = parseRequestPart(ZResponsesRequest, body);
  const resolved = resolveModel(rt, request.model);
  if (!resolved) throw modelNotFound(request.model);
  const projectId = projectHeader ?? OPENAI_DEFAULT_PROJECT_ID;
  const dropped: string[] = [];
  const conversation = [...(await previousConversation(request, stored)), ...toMessages(request, dropped)];
  const messages: ChatCompletionMessageParam[] = request.instructions
    ? [{ role: 'system', content: request.instructions }, ...conversation]
    : conversation;
  const violation = checkChatRules(
    {
      lane: resolved.lane,
      project_id: projectId,
      messages: messages.map((m) => ({ content: textOf(m) })),
      max_tokens: request.max_output_tokens ?? undefined,
      temperature: request.temperature ?? undefined,
    },
    rt.allowedLanes,
  );
  if (violation) throw new AppError(violation);
  const targets = selectTargets(rt.config.lanes[resolved.lane]?.targets ?? [], resolved.model);
  if (!targets) throw modelNotFound(request.model);
  const params = toChatParams(request, messages, dropped, stored !== undefined);
  // Passed as sent to a target serving Responses; a continued conversation is ours to assemble, so translated.
  const native = request.previous_response_id == null;
  const forTarget: PreparedChat['forTarget'] = (chatParams, target) => {
    if (native && rt.catalog.get(target.provider)?.responses) return { params: chatParams, dropped: [] };
    const own = chatParamsFor(rt, chatParams, target, { translated: true });
    const names = own.dropped.map((name) => RESPONSES_NAMES[name] ?? name);
    return { params: own.params, dropped: [...new Set([...dropped, ...names])] };
  };
  return {
    chat: {
      lane: resolved.lane,
      projectId,
      targets,
      params,
      forTarget,
      ...(native
        ? { native: { format: 'openai-responses' as const, body: body as Record<string, unknown> } }
        : {}),
    },
    stream: request.stream === true,
    request,
    conversation,
    store: request.store === true && stored !== undefined,
  };
}
