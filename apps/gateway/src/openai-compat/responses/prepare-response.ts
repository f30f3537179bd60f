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
export type PreparedResponse = { chat: PreparedChat; stream: boolean; request: ResponsesRequest };

/** Stateless until stored responses exist: a chained request cannot be served without its history. */
function refuseStatefulFeatures(request: ResponsesRequest): void {
  if (request.previous_response_id != null) {
    throw unsupportedParameter(
      'previous_response_id',
      'previous_response_id is not supported: this gateway stores no responses (store: false); send the whole conversation in input.',
    );
  }
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
export function prepareResponse(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes' | 'catalog'>,
  body: unknown,
  projectHeader: string | undefined,
): PreparedResponse {
  const request = parseRequestPart(ZResponsesRequest, body);
  refuseStatefulFeatures(request);
  const resolved = resolveModel(rt, request.model);
  if (!resolved) throw modelNotFound(request.model);
  const projectId = projectHeader ?? OPENAI_DEFAULT_PROJECT_ID;
  const dropped: string[] = [];
  const messages = toMessages(request, dropped);
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
  const params = toChatParams(request, messages, dropped);
  const forTarget: PreparedChat['forTarget'] = (chatParams, target) => {
    const own = chatParamsFor(rt, chatParams, target, { tokenField: 'max_tokens', translated: true });
    const names = own.dropped.map((name) => RESPONSES_NAMES[name] ?? name);
    return { params: own.params, dropped: [...new Set([...dropped, ...names])] };
  };
  return {
    chat: { lane: resolved.lane, projectId, targets, params, forTarget },
    stream: request.stream === true,
    request,
  };
}
