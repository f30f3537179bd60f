import {
  checkChatRules,
  OPENAI_DEFAULT_PROJECT_ID,
  type OpenAiChatRequest,
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
 * The client's body as the upstream params: every field as sent (the field
 * policy: same protocol, passed through), less those the gateway sets per
 * target or stream (`model`, `stream`, `stream_options`). The token limit is
 * carried as `max_tokens` whichever name the client used (the accounting caps
 * it); chatParamsFor gives it back its name per target. A shallow copy: the
 * messages are the client's own objects, not cloned.
 */
function upstreamParams(body: Record<string, unknown>, request: OpenAiChatRequest): UpstreamChatParams {
  const { model: _m, stream: _s, stream_options: _o, max_completion_tokens, ...rest } = body;
  if (request.max_completion_tokens != null) rest.max_tokens = max_completion_tokens;
  return rest as unknown as UpstreamChatParams;
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
  const tokenField = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  return {
    chat: {
      lane: resolved.lane,
      projectId,
      targets: laneTargets,
      // Parsed successfully, so an object.
      params: upstreamParams(body as Record<string, unknown>, request),
      forTarget: (params, target) => chatParamsFor(rt, params, target, { tokenField }),
    },
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
  };
}
