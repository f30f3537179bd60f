import {
  CHAT_LIMITS,
  checkChatRules,
  OPENAI_DEFAULT_PROJECT_ID,
  ZAnthropicMessagesRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import type { PreparedChat } from '../../ai/chat-request';
import { selectTargets, type Target } from '../../ai/config/lanes';
import { chatParamsFor } from '../../ai/field-policy';
import type { AiRuntime } from '../../ai/runtime';
import { modelNotFound } from '../errors';
import { resolveModel } from '../models';
import { countedTexts, toChatParams } from './translate-request';

/** A `POST /v1/messages` body turned into the shared chat input. */
export type PreparedMessages = { chat: PreparedChat; stream: boolean };

const NOTHING: readonly string[] = [];

/** Whether a target speaks Anthropic's Messages API (its catalogue row), and so gets the request as sent. */
export function speaksMessages(rt: Pick<AiRuntime, 'catalog'>, target: Target): boolean {
  return rt.catalog.get(target.provider)?.api === 'anthropic';
}

/**
 * Validates a Messages request (shape 422, model 404, then the chat rules
 * every AI route applies) and decides its targets. Nothing the vendor's API
 * takes is refused (docs/gateway-ai.md#field-policy): an Anthropic target
 * gets the client's body as sent, `model` alone replaced; an
 * OpenAI-compatible one gets its chat translation, and what that cannot carry
 * is dropped and named in `x-gateway-dropped-params`.
 */
export function prepareMessages(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes' | 'catalog'>,
  body: unknown,
  headers: { projectId: string | undefined; beta: string | undefined },
): PreparedMessages {
  const request = parseRequestPart(ZAnthropicMessagesRequest, body);
  const resolved = resolveModel(rt, request.model);
  if (!resolved) throw modelNotFound(request.model);
  const projectId = headers.projectId ?? OPENAI_DEFAULT_PROJECT_ID;
  const counted = countedTexts(request);
  // The lane, project, max_tokens and temperature rules of every chat route.
  // Sizes differ (docs/gateway-ai.md): agent sessions like Claude Code's run to
  // hundreds of messages, and their system prompts and file reads pass 64 KiB,
  // so only the 8 MiB total applies, to the system prompt and messages together.
  if (request.messages.length === 0) throw new AppError('messages_empty');
  const violation = checkChatRules(
    {
      lane: resolved.lane,
      project_id: projectId,
      messages: [{ content: '' }],
      max_tokens: request.max_tokens,
      temperature: request.temperature,
    },
    rt.allowedLanes,
  );
  if (violation) throw new AppError(violation);
  if (counted.systemBytes + counted.messageBytes > CHAT_LIMITS.maxTotalBytes)
    throw new AppError('total_content_too_long');
  const targets = selectTargets(rt.config.lanes[resolved.lane]?.targets ?? [], resolved.model);
  if (!targets) throw modelNotFound(request.model);

  const translated = toChatParams(request);
  // The client's own object (key order as sent), so a passed-through body matches the client's bytes.
  const native = body as Record<string, unknown>;
  return {
    chat: {
      lane: resolved.lane,
      projectId,
      targets,
      params: translated.params,
      native: { format: 'anthropic', body: native, ...(headers.beta ? { beta: headers.beta } : {}) },
      forTarget: (params, target) => {
        // An Anthropic target gets `native` as sent; params are not used.
        if (speaksMessages(rt, target)) return { params, dropped: NOTHING };
        const chat = chatParamsFor(rt, params, target);
        const dropped = [...translated.dropped, ...chat.dropped];
        return { params: chat.params, dropped: dropped.length > 0 ? dropped : NOTHING };
      },
    },
    stream: request.stream === true,
  };
}
