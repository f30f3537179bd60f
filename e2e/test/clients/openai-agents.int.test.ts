// The OpenAI Agents SDK (`@openai/agents`, installed unmodified) through the
// gateway: an agent with a function tool and `parallelToolCalls: true` runs a
// tool round trip (two parallel calls, then the answer), on the Chat
// Completions model and on the Responses model, plain and streamed, against an
// OpenAI-protocol target and an Anthropic target.

import {
  Agent,
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  run,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { writeCompatDoc } from './support/compat-matrix';
import { type ClientGateway, ledgerMark, ledgerRows, startClientGateway } from './support/openai-gateway';
import { checkClient } from './support/record';
import {
  ANSWER,
  CACHED,
  CITIES,
  LANE,
  scriptWeatherTurns,
  type TargetKind,
  toolResultsOf,
  upstreamBodies,
  weatherOf,
} from './support/weather-turns';

jest.setTimeout(120_000);
// No trace export: nothing may leave the machine.
setTracingDisabled(true);

let gw: ClientGateway;

beforeAll(async () => {
  gw = await startClientGateway();
}, 120_000);
afterAll(async () => {
  await gw?.h.close();
  writeCompatDoc();
});
beforeEach(() => gw.h.resetFakes());

type Api = 'chat' | 'responses';

function agentFor(api: Api, kind: TargetKind): Agent {
  const client = new OpenAI({ apiKey: gw.caller.apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const model =
    api === 'chat'
      ? new OpenAIChatCompletionsModel(client, LANE[kind])
      : new OpenAIResponsesModel(client, LANE[kind]);
  return new Agent({
    name: 'weather',
    instructions: 'Answer with the weather of every city asked about.',
    model,
    modelSettings: { parallelToolCalls: true },
    tools: [
      tool({
        name: 'get_weather',
        description: 'The weather of a city',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => weatherOf(city),
      }),
    ],
  });
}

async function runAgent(agent: Agent, stream: boolean): Promise<string> {
  const input = 'Weather in Oslo and Rome?';
  if (!stream) return String((await run(agent, input)).finalOutput);
  const result = await run(agent, input, { stream: true });
  let streamed = '';
  for await (const text of result.toTextStream()) streamed += text;
  await result.completed;
  expect(streamed).toBe(ANSWER);
  return String(result.finalOutput);
}

const CASES: Array<[Api, TargetKind, boolean]> = [
  ['chat', 'openai', false],
  ['chat', 'openai', true],
  ['chat', 'anthropic', false],
  ['chat', 'anthropic', true],
  ['responses', 'openai', true],
  ['responses', 'anthropic', true],
];

describe('@openai/agents through the gateway', () => {
  it.each(CASES)('%s model, %s target, stream %s: parallel tool round trip', async (api, kind, stream) => {
    await checkClient(
      {
        client: '@openai/agents',
        how: `${api === 'chat' ? 'OpenAIChatCompletionsModel' : 'OpenAIResponsesModel'}, baseURL \`/v1\`, model \`${LANE[kind]}\`, parallelToolCalls`,
        target: kind === 'anthropic' ? 'anthropic' : api === 'responses' ? 'openai-responses' : 'openai-chat',
        stream,
        checks: 'parallel tool round trip, cache tokens in the ledger',
      },
      async () => {
        scriptWeatherTurns(gw, kind);
        const mark = await ledgerMark(gw);
        expect(await runAgent(agentFor(api, kind), stream)).toBe(ANSWER);

        const bodies = upstreamBodies(gw, kind);
        expect(bodies).toHaveLength(2);
        // parallel_tool_calls reached an OpenAI target as sent; Anthropic parallelises by default.
        if (kind === 'openai') expect(bodies[0]?.parallel_tool_calls).toBe(true);
        else {
          expect(bodies[0]?.tools).toEqual([expect.objectContaining({ name: 'get_weather' })]);
          expect(bodies[0]?.tool_choice ?? {}).not.toHaveProperty('disable_parallel_tool_use');
        }
        expect(toolResultsOf(bodies[1]).join('|')).toBe(CITIES.map(weatherOf).join('|'));

        const rows = await ledgerRows(gw, mark);
        expect(rows.map((r) => r.status)).toEqual([200, 200]);
        expect(rows.map((r) => r.cachedTokens)).toEqual(CACHED);
      },
    );
  });
});
