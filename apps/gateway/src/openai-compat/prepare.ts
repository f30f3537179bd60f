import {
  checkChatRules,
  OPENAI_DEFAULT_PROJECT_ID,
  OPENAI_PASSTHROUGH_PARAMS,
  OPENAI_REQUEST_FIELDS,
  type OpenAiChatRequest,
  type OpenAiMessage,
  type OpenAiPassthroughParam,
  ZOpenAiChatRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { PreparedChat, UpstreamChatParams } from '../ai/chat-request';
import { selectTargets, type Target } from '../ai/config/lanes';
import { ANTHROPIC_REFUSED_PARAMS } from '../ai/providers/anthropic-translate';
import type { AiRuntime } from '../ai/runtime';
import { modelNotFound, refuseUnknownFields, unsupportedParameter } from './errors';
import { resolveModel, validModelsText } from './models';

/** An OpenAI-format request turned into the shared chat input, plus how to answer it. */
export type PreparedOpenAiChat = {
  chat: PreparedChat;
  stream: boolean;
  /** `stream_options.include_usage`: end the stream with a usage chunk. */
  includeUsage: boolean;
};

const KNOWN_FIELDS: ReadonlySet<string> = new Set(OPENAI_REQUEST_FIELDS);

/** The text the size rules count: content (string or text parts) and tool call arguments. */
function countedText(message: OpenAiMessage): string {
  const { content } = message;
  let text = typeof content === 'string' ? content : (content ?? []).map((p) => p.text).join('');
  if (message.role === 'assistant' && message.tool_calls) {
    text += message.tool_calls.map((c) => c.function.arguments).join('');
  }
  return text;
}

/** The passthrough parameters the request sets; `null` counts as absent. */
function usedParams(request: OpenAiChatRequest): OpenAiPassthroughParam[] {
  return OPENAI_PASSTHROUGH_PARAMS.filter((p) => request[p] !== undefined && request[p] !== null);
}

/**
 * Targets whose provider accepts every used parameter (lanes config
 * `providers.<name>.unsupported_params`, plus what Anthropic has no equivalent
 * for). When none is left the request is
 * refused with the parameter at fault rather than sent without it.
 */
function targetsAccepting(
  rt: Pick<AiRuntime, 'config' | 'catalog'>,
  targets: readonly Target[],
  used: readonly OpenAiPassthroughParam[],
  model: string,
): readonly Target[] {
  const refused = (t: Target): readonly OpenAiPassthroughParam[] => [
    ...(rt.config.providers[t.provider]?.unsupported_params ?? []),
    ...(rt.catalog.get(t.provider)?.api === 'anthropic' ? ANTHROPIC_REFUSED_PARAMS : []),
  ];
  const accepting = targets.filter((t) => !used.some((p) => refused(t).includes(p)));
  if (accepting.length > 0) return accepting;
  const param = used.find((p) => targets.some((t) => refused(t).includes(p))) ?? used[0] ?? 'model';
  throw unsupportedParameter(
    param,
    `Unsupported parameter: '${param}' is not supported by the providers of \`${model}\`.`,
  );
}

function upstreamParams(
  request: OpenAiChatRequest,
  used: readonly OpenAiPassthroughParam[],
): UpstreamChatParams {
  const params: Record<string, unknown> = {
    // The schema admits only OpenAI's message shapes, so the SDK's type fits.
    messages: request.messages as ChatCompletionMessageParam[],
  };
  for (const p of used) params[p] = request[p];
  return params as unknown as UpstreamChatParams;
}

/**
 * Validates a `POST /v1/chat/completions` body: unknown fields (400), shape
 * (422) and ranges (400), the model (404 as OpenAI answers an unknown model),
 * then the native chat rules and the providers' parameter support.
 */
export function prepareOpenAiChat(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes' | 'catalog'>,
  body: unknown,
  projectHeader: string | undefined,
): PreparedOpenAiChat {
  refuseUnknownFields(body, KNOWN_FIELDS, (shown) => `Unrecognized request argument supplied: ${shown}`);
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
  const used = usedParams(request);
  return {
    chat: {
      lane: resolved.lane,
      projectId,
      targets: targetsAccepting(rt, laneTargets, used, request.model),
      params: upstreamParams(request, used),
    },
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
  };
}
