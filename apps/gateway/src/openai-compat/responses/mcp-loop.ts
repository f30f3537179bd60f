import { randomUUID } from 'node:crypto';
import { sendJson } from '@platform/service-kit';
import type { Response } from 'express';
import type {
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { callerOf } from '../../admission/caller';
import { answerWith, logUpstream, runAccounted } from '../../ai/accounting';
import type { CacheTokens } from '../../ai/chat';
import { completionUsage, runChatCompletion } from '../../ai/chat';
import type { PreparedChat } from '../../ai/chat-request';
import type { Target } from '../../ai/config/lanes';
import type { AiRuntime } from '../../ai/runtime';
import type { ChatToolSession, McpToolRequest } from '../../mcp/chat-tools';
import type { McpGateway } from '../../mcp/gateway';
import { unsupportedParameter } from '../errors';
import { responseIdentity, toResponse } from './create-response';
import type { PreparedResponse } from './prepare-response';

/** Model turns one request may take calling MCP tools before it must answer. */
export const MAX_MCP_STEPS = 8;

/** A request's `type: "mcp"` tools: the registered server each names (`server_label`) and its allowed tools. */
export function mcpToolsOf(request: { tools?: ReadonlyArray<{ type: string }> | null }): McpToolRequest[] {
  return (request.tools ?? [])
    .filter((t) => t.type === 'mcp')
    .map((t) => {
      const raw = t as { server_label?: unknown; allowed_tools?: unknown };
      const allowed = Array.isArray(raw.allowed_tools)
        ? raw.allowed_tools.filter((n): n is string => typeof n === 'string')
        : null;
      return { server: typeof raw.server_label === 'string' ? raw.server_label : '', allowedTools: allowed };
    });
}

type Segment = {
  target: Target;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cached_tokens?: number };
  cache: CacheTokens | null;
};

function sumUsage(segments: Segment[]) {
  const prompt = segments.reduce((n, s) => n + s.usage.prompt_tokens, 0);
  const completion = segments.reduce((n, s) => n + s.usage.completion_tokens, 0);
  const cached = segments.reduce((n, s) => n + (s.usage.cached_tokens ?? 0), 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cached_tokens: cached,
  };
}

/** The `mcp_list_tools` items the answer starts with, as OpenAI's Responses API shows them. */
function listItems(tools: ChatToolSession) {
  return tools.listed.map((l) => ({
    type: 'mcp_list_tools',
    id: `mcpl_${randomUUID().replace(/-/g, '')}`,
    server_label: l.server,
    tools: l.tools.map((t) => ({
      name: t.name,
      description: t.description ?? null,
      input_schema: t.inputSchema,
    })),
  }));
}

/** Runs the MCP calls of one model turn (in parallel); returns the tool messages and `mcp_call` items. */
async function runCalls(tools: ChatToolSession, calls: ChatCompletionMessageToolCall[], signal: AbortSignal) {
  const done = await Promise.all(
    calls.map(async (c) => {
      const fn = c.type === 'function' ? c.function : { name: '', arguments: '' };
      return { id: c.id, record: await tools.call(fn.name, fn.arguments, signal) };
    }),
  );
  const messages: ChatCompletionMessageParam[] = done.map((d) => ({
    role: 'tool',
    tool_call_id: d.id,
    content: d.record.error !== null ? `Error: ${d.record.error}` : (d.record.output ?? ''),
  }));
  const items = done.map((d) => ({
    type: 'mcp_call',
    id: `mcp_${randomUUID().replace(/-/g, '')}`,
    server_label: d.record.server,
    name: d.record.tool,
    arguments: d.record.arguments,
    output: d.record.output,
    error: d.record.error,
  }));
  return { messages, items };
}

/** The answer of a route to a completion that called no more MCP tools, with the `mcp_*` items so far. */
export type McpLoopAnswer = (
  completion: ChatCompletion,
  target: Target,
  requestId: string,
  items: Array<Record<string, unknown>>,
) => unknown;

/**
 * A /v1 chat route's request with MCP tools (`requested`, registered
 * servers): the key's allowed tools of those servers are offered to the
 * model as functions; the calls it makes run through the MCP gateway
 * (governed, each a ledger record of its own), their results go back to the
 * model, until it answers without calling one (at most MAX_MCP_STEPS
 * turns), on whatever target its lane has. The model turns are one ledger
 * record of the request (`endpoint`), each turn priced at the target that
 * served it. Not streamed.
 */
export async function runChatWithMcp(
  rt: AiRuntime,
  mcp: McpGateway,
  res: Response,
  prepared: { chat: PreparedChat; stream: boolean },
  requested: McpToolRequest[],
  route: { endpoint: string; answer: McpLoopAnswer },
): Promise<void> {
  if (prepared.stream) {
    throw unsupportedParameter(
      'stream',
      'stream: true is not supported with tools of type mcp; send stream: false.',
    );
  }
  const caller = callerOf(res);
  const owner = {
    userId: caller.userId,
    apiKeyId: caller.apiKeyId ?? '',
    projectId: prepared.chat.projectId,
  };
  // The MCP SDK loads with the first request that names MCP tools (issue 46: memory).
  const { openChatTools } = require('../../mcp/chat-tools') as typeof import('../../mcp/chat-tools');
  const tools = await openChatTools(mcp, owner, requested);
  const own = (prepared.chat.params.tools ?? []).filter((t) => (t as { type?: unknown }).type !== 'mcp');
  // The loop runs through the chat path: the request is not passed as sent to a Responses target.
  const { native: _asSent, ...base } = prepared.chat;
  const chat: PreparedChat = {
    ...base,
    params: { ...prepared.chat.params, tools: [...own, ...tools.tools] },
  };
  const request = { projectId: chat.projectId, endpoint: route.endpoint, lane: chat.lane, chat };
  try {
    await runAccounted(rt, res, request, async (call) => {
      const segments: Segment[] = [];
      const items: Array<Record<string, unknown>> = listItems(tools);
      let messages = chat.params.messages;
      for (let step = 0; ; step += 1) {
        if (step > 0) {
          await call.reserveMore({
            promptTokens: 0,
            completionTokens: chat.params.max_tokens ?? rt.completionAllowance,
          });
        }
        const turn = { ...chat, params: { ...chat.params, messages } };
        const result = await runChatCompletion(rt, turn, call.storedKeys, call.clientSignal);
        const used = completionUsage(turn, result);
        segments.push({ target: result.target, usage: used.usage, cache: used.cache ?? null });
        const message = result.value.choices[0]?.message;
        const toolCalls = message?.tool_calls ?? [];
        const mcpCalls = toolCalls.filter((c) => c.type === 'function' && tools.has(c.function.name));
        // Done: no MCP call, a function of the client's own to answer, or no turns left.
        if (mcpCalls.length === 0 || mcpCalls.length < toolCalls.length || step + 1 >= MAX_MCP_STEPS) {
          logUpstream(res, result);
          const response = route.answer(result.value, result.target, call.requestId, items);
          const outcome = {
            status: 200,
            target: result.target,
            usage: sumUsage(segments),
            segments,
            estimated: used.estimated,
            answer: used.answer,
          };
          return answerWith(outcome, () => sendJson(res, response));
        }
        const ran = await runCalls(tools, mcpCalls, call.clientSignal);
        items.push(...ran.items);
        messages = [
          ...messages,
          { role: 'assistant', content: message?.content ?? null, tool_calls: mcpCalls },
          ...ran.messages,
        ];
      }
    });
  } finally {
    await tools.close();
  }
}

/** `POST /v1/responses` with tools of `type: "mcp"`: `mcp_list_tools` and `mcp_call` items lead the output. */
export function runResponseWithMcp(
  rt: AiRuntime,
  mcp: McpGateway,
  res: Response,
  prepared: PreparedResponse,
  requested: McpToolRequest[],
): Promise<void> {
  return runChatWithMcp(rt, mcp, res, prepared, requested, {
    endpoint: 'responses',
    answer: (completion, target, requestId, items) => {
      const answer = toResponse(
        completion,
        target.model,
        responseIdentity(requestId, prepared.chat.lane),
        prepared.request,
      );
      return { ...answer, output: [...items, ...answer.output] };
    },
  });
}
