import {
  checkChatRules,
  OPENAI_DEFAULT_PROJECT_ID,
  RESPONSES_REQUEST_FIELDS,
  type ResponsesInputItem,
  type ResponsesRequest,
  ZResponsesRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { PreparedChat, UpstreamChatParams } from '../../ai/chat-request';
import { selectTargets } from '../../ai/config/lanes';
import type { AiRuntime } from '../../ai/runtime';
import { modelNotFound, refuseUnknownFields, unsupportedParameter } from '../errors';
import { resolveModel } from '../models';

/** A `POST /v1/responses` body turned into the shared chat input, plus what the answer echoes. */
export type PreparedResponse = { chat: PreparedChat; stream: boolean; request: ResponsesRequest };

const KNOWN_FIELDS: ReadonlySet<string> = new Set(RESPONSES_REQUEST_FIELDS);

/** What the gateway cannot do statelessly is refused before anything is sent (docs/gateway-ai.md). */
function refuseStatefulFeatures(request: ResponsesRequest): void {
  if (request.previous_response_id != null) {
    throw unsupportedParameter(
      'previous_response_id',
      'previous_response_id is not supported: this gateway stores no responses (store: false); send the whole conversation in input.',
    );
  }
  if (request.store === true) {
    throw unsupportedParameter(
      'store',
      'store: true is not supported: this gateway stores no responses; omit store or set it to false.',
    );
  }
  request.tools?.forEach((tool, i) => {
    if (tool.type !== 'function' || !tool.name) {
      throw unsupportedParameter(
        `tools.${i}`,
        `Tool type '${tool.type}' is not supported; only function tools are.`,
      );
    }
  });
}

function text(content: string | Array<{ text: string }>): string {
  return typeof content === 'string' ? content : content.map((p) => p.text).join('');
}

/** `instructions` and `input` as chat messages; consecutive function calls form one assistant turn. */
function toMessages(request: ResponsesRequest): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (request.instructions) out.push({ role: 'system', content: request.instructions });
  const items: ResponsesInputItem[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  for (const item of items) {
    if (item.type === 'function_call') {
      const call = {
        id: item.call_id,
        type: 'function' as const,
        function: { name: item.name, arguments: item.arguments },
      };
      const last = out.at(-1);
      if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      out.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
    } else {
      const role = item.role === 'developer' ? 'system' : item.role;
      out.push({ role, content: text(item.content) });
    }
  }
  return out;
}

function toolChoice(choice: ResponsesRequest['tool_choice']): UpstreamChatParams['tool_choice'] {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}

function toChatParams(request: ResponsesRequest, messages: ChatCompletionMessageParam[]): UpstreamChatParams {
  const tools = request.tools?.map((t) => ({
    type: 'function' as const,
    function: {
      name: t.name as string,
      ...(t.description ? { description: t.description } : {}),
      parameters: t.parameters ?? { type: 'object', properties: {} },
      ...(t.strict != null ? { strict: t.strict } : {}),
    },
  }));
  const choice = toolChoice(request.tool_choice);
  return {
    messages,
    ...(request.max_output_tokens != null ? { max_tokens: request.max_output_tokens } : {}),
    ...(request.temperature != null ? { temperature: request.temperature } : {}),
    ...(request.top_p != null ? { top_p: request.top_p } : {}),
    ...(tools && tools.length > 0 ? { tools } : {}),
    ...(choice && tools && tools.length > 0 ? { tool_choice: choice } : {}),
    ...(request.parallel_tool_calls != null && tools?.length
      ? { parallel_tool_calls: request.parallel_tool_calls }
      : {}),
    ...(request.user ? { user: request.user } : {}),
  } as UpstreamChatParams;
}

/**
 * Validates a Responses request: unknown fields and stateful features (400
 * `unsupported_parameter`), shape (422), model (404), then the chat rules of
 * every AI route; the input becomes chat messages for the lane's targets.
 */
export function prepareResponse(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes'>,
  body: unknown,
  projectHeader: string | undefined,
): PreparedResponse {
  refuseUnknownFields(
    body,
    KNOWN_FIELDS,
    (shown) => `Unsupported parameter: '${shown}' is not supported by this gateway's Responses API.`,
  );
  const request = parseRequestPart(ZResponsesRequest, body);
  refuseStatefulFeatures(request);
  const resolved = resolveModel(rt, request.model);
  if (!resolved) throw modelNotFound(request.model);
  const projectId = projectHeader ?? OPENAI_DEFAULT_PROJECT_ID;
  const messages = toMessages(request);
  const violation = checkChatRules(
    {
      lane: resolved.lane,
      project_id: projectId,
      messages: messages.map((m) => ({
        content:
          (typeof m.content === 'string' ? m.content : '') +
          (m.role === 'assistant'
            ? (m.tool_calls ?? []).map((c) => ('function' in c ? c.function.arguments : '')).join('')
            : ''),
      })),
      max_tokens: request.max_output_tokens ?? undefined,
      temperature: request.temperature ?? undefined,
    },
    rt.allowedLanes,
  );
  if (violation) throw new AppError(violation);
  const targets = selectTargets(rt.config.lanes[resolved.lane]?.targets ?? [], resolved.model);
  if (!targets) throw modelNotFound(request.model);
  return {
    chat: { lane: resolved.lane, projectId, targets, params: toChatParams(request, messages) },
    stream: request.stream === true,
    request,
  };
}
