import type { ClientGateway } from './openai-gateway';
import { ANTHROPIC_MODEL, OPENAI_MODEL } from './openai-gateway';

/**
 * One scripted tool round trip on the upstream fakes: the model first asks for
 * `get_weather` twice in parallel (Oslo, Rome), then, given the results,
 * answers with `ANSWER`. Both turns report cached prompt tokens (1000, then
 * 1100), which the ledger must show.
 */
export const ANSWER = 'Oslo is sunny, Rome is sunny.';
export const CITIES = ['Oslo', 'Rome'];
export const CACHED = [1000, 1100];

export type TargetKind = 'openai' | 'anthropic';

/** The lane (the client's `model`) per target kind. */
export const LANE: Record<TargetKind, string> = { openai: 'gpt', anthropic: 'claude' };

/** What the client's tool returns for a city: the model's second turn must see it. */
export function weatherOf(city: string): string {
  return `sunny in ${city}`;
}

export function scriptWeatherTurns(gw: ClientGateway, kind: TargetKind): void {
  if (kind === 'openai') {
    gw.h.openai.enqueue(
      {
        model: OPENAI_MODEL,
        toolCalls: CITIES.map((city) => ({ name: 'get_weather', arguments: JSON.stringify({ city }) })),
        usage: { prompt_tokens: 1200, completion_tokens: 20, cached_tokens: CACHED[0] },
      },
      {
        model: OPENAI_MODEL,
        content: ANSWER,
        usage: { prompt_tokens: 1300, completion_tokens: 8, cached_tokens: CACHED[1] },
      },
    );
    return;
  }
  gw.h.anthropic.enqueue(
    {
      model: ANTHROPIC_MODEL,
      toolCalls: CITIES.map((city) => ({ name: 'get_weather', input: { city } })),
      usage: { input_tokens: 200, output_tokens: 20, cache_read_input_tokens: CACHED[0] },
    },
    {
      model: ANTHROPIC_MODEL,
      content: ANSWER,
      usage: { input_tokens: 200, output_tokens: 8, cache_read_input_tokens: CACHED[1] },
    },
  );
}

type Json = Record<string, unknown>;

/** The upstream requests of the scripted turns, in order. */
export function upstreamBodies(gw: ClientGateway, kind: TargetKind): Json[] {
  const requests = kind === 'openai' ? gw.h.openaiRequests() : gw.h.anthropicRequests();
  return requests.map((r) => r.body as Json);
}

/** The tool results the second upstream turn carried, in any of the three protocols. */
export function toolResultsOf(body: Json | undefined): string[] {
  if (Array.isArray(body?.input)) {
    return (body.input as Json[])
      .filter((i) => i.type === 'function_call_output')
      .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
  }
  const messages = (body?.messages ?? []) as Json[];
  return messages.flatMap((m) => {
    if (m.role === 'tool') return [typeof m.content === 'string' ? m.content : JSON.stringify(m.content)];
    const blocks = Array.isArray(m.content) ? (m.content as Json[]) : [];
    return blocks
      .filter((b) => b.type === 'tool_result')
      .map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content)));
  });
}
