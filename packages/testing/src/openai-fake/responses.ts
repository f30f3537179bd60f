import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { OpenAIBehaviour } from './chat';
import type { RecordedRequest } from './recorder';
import { reply } from './script';

/**
 * OpenAI's Responses API (`POST /v1/responses`) on the fake, driven by the
 * same behaviour as chat: `content` (or `chunks`) as one message item, or
 * `toolCalls` as function_call items; `usage` numbers as input/output tokens
 * with cached and reasoning details. Streams the Responses event sequence.
 */
type ResponsesBody = { model?: string; stream?: boolean; input?: unknown; store?: boolean };

const estimate = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function usageOf(body: ResponsesBody, output: string, behaviour: OpenAIBehaviour) {
  const n = behaviour.usage ?? {};
  const input = n.prompt_tokens ?? estimate(JSON.stringify(body.input ?? ''));
  const out = n.completion_tokens ?? estimate(output);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: n.cached_tokens ?? 0 },
    output_tokens: out,
    output_tokens_details: { reasoning_tokens: n.reasoning_tokens ?? 0 },
    total_tokens: n.total_tokens ?? input + out,
  };
}

function outputOf(behaviour: OpenAIBehaviour, id: string) {
  if (behaviour.toolCalls) {
    return behaviour.toolCalls.map((c, i) => ({
      type: 'function_call',
      id: `fc_${id}_${i}`,
      call_id: `call_fake_${i}`,
      name: c.name,
      arguments: c.arguments,
      status: 'completed',
    }));
  }
  const text = behaviour.content ?? behaviour.chunks?.join('') ?? 'Hello from the OpenAI fake.';
  return [
    {
      type: 'message',
      id: `msg_${id}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    },
  ];
}

function responseOf(
  body: ResponsesBody,
  behaviour: OpenAIBehaviour,
  id: string,
  status: string,
  output: unknown[],
) {
  const text = behaviour.toolCalls ? '' : (behaviour.content ?? behaviour.chunks?.join('') ?? '');
  return {
    id: `resp_${id}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    model: behaviour.model ?? body.model,
    output,
    parallel_tool_calls: true,
    store: body.store ?? true,
    usage: status === 'completed' ? usageOf(body, text, behaviour) : null,
  };
}

export function replyResponses(
  res: ServerResponse,
  record: RecordedRequest,
  body: ResponsesBody,
  behaviour: OpenAIBehaviour,
  headers: Record<string, string>,
): void {
  const id = randomBytes(8).toString('hex');
  const response = responseOf(body, behaviour, id, 'completed', outputOf(behaviour, id));
  record.sent = JSON.stringify(response);
  reply(res, record, 200, response, headers);
}

/** The event sequence: created, in_progress, per item added/deltas/done, completed. */
export function streamResponses(
  res: ServerResponse,
  record: RecordedRequest,
  body: ResponsesBody,
  behaviour: OpenAIBehaviour,
  headers: Record<string, string>,
): void {
  const id = randomBytes(8).toString('hex');
  const output = outputOf(behaviour, id);
  let seq = 0;
  record.status = 200;
  record.sent = '';
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    ...headers,
  });
  const send = (type: string, data: object) => {
    const event = `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
    record.sent += event;
    res.write(event);
  };
  send('response.created', { response: responseOf(body, behaviour, id, 'in_progress', []) });
  send('response.in_progress', { response: responseOf(body, behaviour, id, 'in_progress', []) });
  output.forEach((item, index) => {
    if (item.type === 'function_call') {
      const fc = item as { id: string; arguments: string };
      send('response.output_item.added', {
        output_index: index,
        item: { ...item, arguments: '', status: 'in_progress' },
      });
      send('response.function_call_arguments.delta', {
        item_id: fc.id,
        output_index: index,
        delta: fc.arguments,
      });
      send('response.function_call_arguments.done', {
        item_id: fc.id,
        output_index: index,
        arguments: fc.arguments,
      });
    } else {
      const msg = item as { id: string; content: Array<{ text: string }> };
      const text = msg.content[0]?.text ?? '';
      const pieces = behaviour.chunks ?? text.match(/\S+\s*|\s+/g) ?? [text];
      send('response.output_item.added', {
        output_index: index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      for (const delta of pieces)
        send('response.output_text.delta', {
          item_id: msg.id,
          output_index: index,
          content_index: 0,
          delta,
          logprobs: [],
        });
      send('response.output_text.done', {
        item_id: msg.id,
        output_index: index,
        content_index: 0,
        text,
        logprobs: [],
      });
    }
    send('response.output_item.done', { output_index: index, item });
  });
  send('response.completed', { response: responseOf(body, behaviour, id, 'completed', output) });
  res.end();
}
