import {
  CHAT_LIMITS,
  checkChatRules,
  OPENAI_DEFAULT_PROJECT_ID,
  ZAnthropicMessagesRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import type { PreparedChat } from '../../ai/chat-request';
import { selectTargets } from '../../ai/config/lanes';
import type { AiRuntime } from '../../ai/runtime';
import { modelNotFound, unsupportedParameter } from '../errors';
import { resolveModel } from '../models';
import { countedTexts, toChatParams } from './translate-request';

/** A `POST /v1/messages` body turned into the shared chat input. */
export type PreparedMessages = { chat: PreparedChat; stream: boolean };

/**
 * Validates a Messages request (shape 422, model 404, then the chat rules
 * every AI route applies) and decides its targets: Anthropic targets get the
 * request as sent; OpenAI-compatible ones get its chat translation, and are
 * dropped when the request uses something the translation cannot carry (an
 * image, a server tool); with none left the request is refused (400) naming
 * that field.
 */
export function prepareMessages(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes'>,
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
  const laneTargets = selectTargets(rt.config.lanes[resolved.lane]?.targets ?? [], resolved.model);
  if (!laneTargets) throw modelNotFound(request.model);

  const translated = toChatParams(request);
  let targets = laneTargets;
  if ('untranslatable' in translated) {
    targets = laneTargets.filter((t) => t.provider === 'anthropic');
    if (targets.length === 0)
      // A feature of the request that no target of the lane can serve (see docs/gateway-ai.md).
      throw unsupportedParameter(translated.untranslatable.param, translated.untranslatable.message);
  }
  const { model: _model, ...native } = request;
  return {
    chat: {
      lane: resolved.lane,
      projectId,
      targets,
      params: 'params' in translated ? translated.params : { messages: [] },
      native: { format: 'anthropic', body: native, ...(headers.beta ? { beta: headers.beta } : {}) },
    },
    stream: request.stream === true,
  };
}
