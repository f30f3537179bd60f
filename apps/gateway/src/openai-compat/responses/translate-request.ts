import type { ResponsesInputItem, ResponsesRequest } from '@platform/contract';
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { UpstreamChatParams } from '../../ai/chat-request';

/**
 * The Responses request as chat params (every target is reached through the
 * chat shape). What has no chat equivalent is left out and its name pushed
 * to `dropped` (input item and part types, tool types, fields), so the
 * answer's `x-gateway-dropped-params` names it (docs/gateway-ai.md#field-policy).
 */

type Item = ResponsesInputItem & Record<string, unknown>;
type Part = { type: string; text?: string } & Record<string, unknown>;

function note(dropped: string[], name: string): void {
  if (!dropped.includes(name)) dropped.push(name);
}

/** Text parts as text, images as chat image parts; other part types (files, audio) dropped. */
function toParts(parts: Part[], dropped: string[]): ChatCompletionContentPart[] {
  const out: ChatCompletionContentPart[] = [];
  for (const part of parts) {
    if (typeof part.text === 'string') out.push({ type: 'text', text: part.text });
    else if (part.type === 'input_image' && typeof part.image_url === 'string') {
      const detail = part.detail === 'low' || part.detail === 'high' ? part.detail : 'auto';
      out.push({ type: 'image_url', image_url: { url: part.image_url, detail } });
    } else note(dropped, `input.content.${part.type}`);
  }
  return out;
}

function plainText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Part[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

function messageOf(item: Item, dropped: string[]): ChatCompletionMessageParam {
  const content = item.content as string | Part[];
  const role = item.role === 'developer' ? 'system' : (item.role as 'user' | 'assistant' | 'system');
  if (typeof content === 'string') return { role, content };
  if (role === 'user') {
    const parts = toParts(content, dropped);
    return parts.every((p) => p.type === 'text')
      ? { role, content: parts.map((p) => (p.type === 'text' ? p.text : '')).join('') }
      : { role, content: parts };
  }
  return { role, content: plainText(content) };
}

function pushCall(out: ChatCompletionMessageParam[], item: Item): void {
  const call = {
    id: String(item.call_id),
    type: 'function' as const,
    function: { name: String(item.name), arguments: String(item.arguments) },
  };
  const last = out.at(-1);
  if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
  else out.push({ role: 'assistant', content: null, tool_calls: [call] });
}

/**
 * `input` as chat messages (instructions apart); consecutive function calls
 * form one assistant turn. Items of other types (reasoning, hosted tool
 * calls) have no chat form and are dropped.
 */
export function toMessages(request: ResponsesRequest, dropped: string[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  const input = request.input ?? [];
  const items = (typeof input === 'string' ? [{ role: 'user', content: input }] : input) as Item[];
  for (const item of items) {
    const type = item.type ?? 'message';
    if (type === 'function_call' && typeof item.call_id === 'string') pushCall(out, item);
    else if (type === 'function_call_output' && typeof item.call_id === 'string')
      out.push({ role: 'tool', tool_call_id: item.call_id, content: plainText(item.output) });
    else if (type === 'message' && typeof item.role === 'string') out.push(messageOf(item, dropped));
    else note(dropped, `input.${type}`);
  }
  return out;
}

type ResponsesTool = NonNullable<ResponsesRequest['tools']>[number];

function toTools(tools: readonly ResponsesTool[], dropped: string[]) {
  const out: NonNullable<UpstreamChatParams['tools']> = [];
  for (const t of tools) {
    if (t.type !== 'function' || !t.name) {
      note(dropped, `tools.${t.type}`);
      continue;
    }
    out.push({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.parameters ?? { type: 'object', properties: {} },
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    });
  }
  return out;
}

function toolChoice(
  choice: ResponsesRequest['tool_choice'],
  dropped: string[],
): UpstreamChatParams['tool_choice'] {
  if (choice == null) return undefined;
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && choice.name) return { type: 'function', function: { name: choice.name } };
  note(dropped, 'tool_choice');
  return undefined;
}

/** `text.format` as chat's `response_format`. */
function responseFormat(format: NonNullable<ResponsesRequest['text']>['format']) {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' as const };
  return {
    type: 'json_schema' as const,
    json_schema: {
      name: format.name ?? 'response',
      ...(format.schema ? { schema: format.schema } : {}),
      ...(format.description ? { description: format.description } : {}),
      ...(format.strict != null ? { strict: format.strict } : {}),
    },
  };
}

/** Top-level fields that map to chat, or that the gateway answers itself (echoed, stored). */
const MAPPED: ReadonlySet<string> = new Set([
  'model',
  'input',
  'instructions',
  'stream',
  'tools',
  'tool_choice',
  'temperature',
  'top_p',
  'max_output_tokens',
  'parallel_tool_calls',
  'store',
  'metadata',
  'user',
  'reasoning',
  'text',
  'prompt_cache_key',
  'safety_identifier',
  'service_tier',
  'previous_response_id',
]);

function noteUnmapped(request: ResponsesRequest, dropped: string[], storing: boolean): void {
  for (const [key, value] of Object.entries(request)) {
    if (value == null || MAPPED.has(key)) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    note(dropped, key);
  }
  if (request.reasoning?.summary != null) note(dropped, 'reasoning.summary');
  for (const key of Object.keys(request.text ?? {})) if (key !== 'format') note(dropped, `text.${key}`);
  if (request.store === true && !storing) note(dropped, 'store');
}

/** The chat params of a Responses request (`messages` from toMessages). */
export function toChatParams(
  request: ResponsesRequest,
  messages: ChatCompletionMessageParam[],
  dropped: string[],
  storing: boolean,
): UpstreamChatParams {
  const tools = request.tools ? toTools(request.tools, dropped) : [];
  const choice = toolChoice(request.tool_choice, dropped);
  const format = responseFormat(request.text?.format);
  const extra = request as Record<string, unknown>;
  noteUnmapped(request, dropped, storing);
  return {
    messages,
    ...(request.max_output_tokens != null ? { max_tokens: request.max_output_tokens } : {}),
    ...(request.temperature != null ? { temperature: request.temperature } : {}),
    ...(request.top_p != null ? { top_p: request.top_p } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(choice && tools.length > 0 ? { tool_choice: choice } : {}),
    ...(request.parallel_tool_calls != null && tools.length > 0
      ? { parallel_tool_calls: request.parallel_tool_calls }
      : {}),
    ...(request.user ? { user: request.user } : {}),
    ...(request.reasoning?.effort ? { reasoning_effort: request.reasoning.effort } : {}),
    ...(format ? { response_format: format } : {}),
    ...(request.prompt_cache_key ? { prompt_cache_key: request.prompt_cache_key } : {}),
    ...(typeof extra.safety_identifier === 'string' ? { safety_identifier: extra.safety_identifier } : {}),
    ...(typeof extra.service_tier === 'string' ? { service_tier: extra.service_tier } : {}),
  } as UpstreamChatParams;
}
