import {
  checkChatRules,
  OPENAI_DEFAULT_PROJECT_ID,
  type OpenAiMessage,
  ZOpenAiChatRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import type { PreparedChat, UpstreamChatParams } from '../ai/chat-request';
import { selectTargets } from '../ai/config/lanes';
import { chatParamsFor } from '../ai/field-policy';
import type { AiRuntime } from '../ai/runtime';
import { modelNotFound } from './errors';
import { resolveModel, validModelsText } from './models';

/** An OpenAI-format request turned into the shared chat input, plus how to answer it. */
export type PreparedOpenAiChat = {
  chat: PreparedChat;
  stream: boolean;
  /** `stream_options.include_usage`: end the stream with a usage chunk. */
  includeUsage: boolean;
};

/** The text the size rules count: content (string or text parts) and tool call arguments. */
function countedText(message: OpenAiMessage): string {
  const { content } = message;
  let text = typeof content === 'string' ? content : (content ?? []).map((p) => p.text ?? '').join('');
  if (message.role === 'assistant' && message.tool_calls) {
    text += message.tool_calls.map((c) => c.function.arguments).join('');
  }
  return text;
}

/**
 * Validates a `POST /v1/chat/completions` body: shape (422) and ranges (400),
 * the model (404 as OpenAI answers an unknown model), then the native chat
 * rules. Fields the gateway does not read are accepted and passed on
 * (docs/gateway-ai.md#field-policy).
 */
export function prepareOpenAiChat(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes' | 'catalog'>,
  body: unknown,
  projectHeader: string | undefined,
): PreparedOpenAiChat {
  const request = parseRequestPart(ZOpenAiChatRequest, body);
  const resolved = resolveModel(rt, request.model);
  if (!resolved) throw modelNotFound(request.model, validModelsText(rt));
  const projectId = projectHeader ?? OPENAI_DEFAULT_PROJECT_ID;
  const maxTokens = Math.max(request.max_tokens ?? 0, request.max_completion_tokens ?? 0);
  const violation = checkChatRules(
    {
      lane: resolved.lane,
      project_id: projectId,
      messages: request.messages.map((m) => ({ content: countedText(m) })),
      max_tokens: maxTokens > 0 ? maxTokens : undefined,
      temperature: request.temperature ?? undefined,
    },
    rt.allowedLanes,
  );
  if (violation) throw new AppError(violation);
  const laneTargets = selectTargets(rt.config.lanes[resolved.lane]?.targets ?? [], resolved.model);
  if (!laneTargets) throw modelNotFound(request.model, validModelsText(rt));
  return {
    chat: {
      lane: resolved.lane,
      projectId,
      targets: laneTargets,
      // Same protocol: the client's own body (not a copy), `model` set per target (field policy).
      params: body as UpstreamChatParams,
      forTarget: (params, target) => chatParamsFor(rt, params, target),
    },
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
  };
}
