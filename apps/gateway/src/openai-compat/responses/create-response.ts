import type { ChatUsage, ResponsesRequest } from '@platform/contract';
import type {
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { type CacheTokens, cacheTokensOf, toChatUsage } from '../../ai/chat';
import { reasoningTokensOf } from '../create-chat-completion';

/** What names an answer: our id (from the request id), its time, and the lane. */
export type ResponseIdentity = { id: string; requestId: string; created: number; lane: string };

export function responseIdentity(requestId: string, lane: string): ResponseIdentity {
  return { id: `resp_${requestId}`, requestId, created: Math.floor(Date.now() / 1000), lane };
}

export type OutputItem = Record<string, unknown> & { type: string; id: string };

export function messageItem(
  who: ResponseIdentity,
  text: string,
  status: 'in_progress' | 'completed',
): OutputItem {
  return {
    type: 'message',
    id: `msg_${who.requestId}`,
    status,
    role: 'assistant',
    content: status === 'completed' ? [outputText(text)] : [],
  };
}

export function outputText(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(
  who: ResponseIdentity,
  index: number,
  call: { id: string; name: string; arguments: string },
  status: 'in_progress' | 'completed',
): OutputItem {
  return {
    type: 'function_call',
    id: `fc_${who.requestId}_${index}`,
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
    status,
  };
}

/** Chat usage in the Responses format, with the cache and reasoning counts the provider reported. */
export function toResponsesUsage(usage: ChatUsage, cache: CacheTokens | null, reasoning: number | undefined) {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: cache?.read ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: reasoning ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

/**
 * The response object around `output`: what was asked echoed back, `store`
 * whether it is kept, the model as `<lane>/<model>`.
 */
export function responseObject(
  who: ResponseIdentity,
  request: ResponsesRequest,
  model: string,
  fields: {
    status: string;
    output: OutputItem[];
    usage: ReturnType<typeof toResponsesUsage> | null;
    incomplete?: string;
    /** The response is kept (`store: true` and storing is on). */
    stored?: boolean;
  },
) {
  return {
    id: who.id,
    object: 'response',
    created_at: who.created,
    status: fields.status,
    background: false,
    error: null,
    incomplete_details: fields.incomplete ? { reason: fields.incomplete } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: `${who.lane}/${model}`,
    output: fields.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: request.reasoning ?? null,
    store: fields.stored === true,
    temperature: request.temperature ?? null,
    text: request.text?.format ? request.text : { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? null,
    truncation: 'disabled',
    usage: fields.usage,
    metadata: request.metadata ?? {},
  };
}

/** `incomplete` with its reason when the model hit the token limit; otherwise `completed`. */
export function statusOf(finishReason: string | null | undefined): { status: string; incomplete?: string } {
  return finishReason === 'length'
    ? { status: 'incomplete', incomplete: 'max_output_tokens' }
    : { status: 'completed' };
}

/** A Responses answer as built here (`id`, `output`, ...), what a stored response keeps. */
export type ResponseAnswer = ReturnType<typeof responseObject>;

/** The answer's output as the assistant turn of a chat conversation (text and tool calls). */
export function outputMessage(output: readonly OutputItem[]): ChatCompletionMessageParam {
  let text = '';
  const calls: ChatCompletionMessageToolCall[] = [];
  for (const item of output) {
    if (item.type === 'message') {
      for (const part of item.content as Array<{ text?: string }>) text += part.text ?? '';
    } else if (item.type === 'function_call') {
      const { call_id, name, arguments: args } = item as OutputItem & Record<string, string>;
      calls.push({
        id: call_id ?? '',
        type: 'function',
        function: { name: name ?? '', arguments: args ?? '' },
      });
    }
  }
  return { role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

/** A chat completion as a Responses answer: a message item with the text, a function_call item per call. */
export function toResponse(
  completion: ChatCompletion,
  model: string,
  who: ResponseIdentity,
  request: ResponsesRequest,
  stored = false,
) {
  const choice = completion.choices[0];
  const output: OutputItem[] = [];
  if (choice?.message.content) output.push(messageItem(who, choice.message.content, 'completed'));
  (choice?.message.tool_calls ?? []).forEach((call, i) => {
    if (call.type === 'function')
      output.push(functionCallItem(who, i, { id: call.id, ...call.function }, 'completed'));
  });
  return responseObject(who, request, model, {
    ...statusOf(choice?.finish_reason),
    stored,
    output,
    usage: toResponsesUsage(
      toChatUsage(completion.usage),
      cacheTokensOf(completion.usage),
      reasoningTokensOf(completion.usage),
    ),
  });
}

/** A target's own Responses answer (same protocol), only `model` set to `<lane>/<model>`. */
export function passThroughResponse(original: Record<string, unknown>, model: string, who: ResponseIdentity) {
  return { ...original, model: `${who.lane}/${model}` } as ResponseAnswer;
}
