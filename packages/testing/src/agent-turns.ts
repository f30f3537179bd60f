import type { AnthropicBehaviour } from './anthropic-fake';
import type { OpenAIBehaviour } from './openai-fake';

/**
 * Responders (see `respond` on the fakes) that play the model of a coding
 * agent such as Claude Code: a request whose tools include `tool` and whose
 * last turn is not a tool result is answered with calls of that tool, one per
 * input (parallel calls when there are several); a request carrying tool
 * results is answered with text quoting them, so a test sees that the client
 * really ran the tool. Any other request (a client's side requests: titles,
 * quota checks) is left to the rest of the fake's script.
 */
export type AgentTurns = {
  /** The tool the model asks for, e.g. `Bash`. */
  tool: string;
  /** One input per parallel call, e.g. `[{ command: 'echo hi' }]`. */
  inputs: Array<Record<string, unknown>>;
  /** Prefix of the final answer; the tool results follow, joined by ` | `. */
  answerPrefix?: string;
};

type Json = Record<string, unknown>;

const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return list(content)
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join('');
}

function answerText(turns: AgentTurns, results: string[]): string {
  return `${turns.answerPrefix ?? 'The tool said:'} ${results.map((r) => r.trim()).join(' | ')}`;
}

/** The tool results of an Anthropic request's last user turn. */
function anthropicToolResults(body: Json): string[] | undefined {
  const last = list(body.messages).at(-1);
  if (last?.role !== 'user') return undefined;
  const results = list(last.content).filter((b) => b.type === 'tool_result');
  return results.length > 0 ? results.map((b) => textOf(b.content)) : undefined;
}

/** A responder for the Anthropic fake (Messages requests). */
export function anthropicAgentTurns(
  turns: AgentTurns,
  extra: AnthropicBehaviour = {},
): (body: Json) => AnthropicBehaviour | undefined {
  return (body) => {
    const results = anthropicToolResults(body);
    if (results) return { ...extra, content: answerText(turns, results) };
    if (!list(body.tools).some((t) => t.name === turns.tool)) return undefined;
    return { ...extra, toolCalls: turns.inputs.map((input) => ({ name: turns.tool, input })) };
  };
}

/** The tool messages after an OpenAI chat request's last assistant turn. */
function chatToolResults(body: Json): string[] | undefined {
  const messages = list(body.messages);
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i -= 1)
    results.unshift(textOf(messages[i]?.content));
  return results.length > 0 ? results : undefined;
}

/** A responder for the OpenAI fake (chat completions requests). */
export function chatAgentTurns(
  turns: AgentTurns,
  extra: OpenAIBehaviour = {},
): (body: Json) => OpenAIBehaviour | undefined {
  return (body) => {
    const results = chatToolResults(body);
    if (results) return { ...extra, content: answerText(turns, results) };
    const offered = list(body.tools).some((t) => (t.function as Json | undefined)?.name === turns.tool);
    if (!offered) return undefined;
    return {
      ...extra,
      toolCalls: turns.inputs.map((input) => ({ name: turns.tool, arguments: JSON.stringify(input) })),
    };
  };
}
