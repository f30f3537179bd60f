// The Vercel AI SDK (`ai` with `@ai-sdk/openai` and `@ai-sdk/anthropic`,
// installed unmodified) through the gateway: a multi-step tool round trip
// (two parallel tool calls, then the answer) with generateText and
// streamText, on an OpenAI-protocol target and an Anthropic target; the SDK's
// own usage must show the cached tokens, and the ledger must record them.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
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

let gw: ClientGateway;

beforeAll(async () => {
  gw = await startClientGateway();
}, 120_000);
afterAll(async () => {
  await gw?.h.close();
  writeCompatDoc();
});
beforeEach(() => gw.h.resetFakes());

type Provider = 'openai.chat' | 'openai.responses' | 'anthropic';

const RUNNER = path.join(__dirname, 'support/ai-sdk-run.mjs');

type Outcome = { text: string; cacheRead: Array<number | null> };

/**
 * One generateText / streamText tool round trip (support/ai-sdk-run.mjs: the
 * SDK is ESM-only, so it runs in its own Node process); its tool answers
 * `sunny in <city>`, as weatherOf does.
 */
async function runTools(provider: Provider, kind: TargetKind, stream: boolean): Promise<Outcome> {
  const args = { provider, baseURL: `${gw.url}/v1`, apiKey: gw.caller.apiKey, model: LANE[kind], stream };
  const { stdout } = await promisify(execFile)(process.execPath, [RUNNER, JSON.stringify(args)], {
    env: { PATH: process.env.PATH ?? '' },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Outcome;
}

/** The upstream target protocol a provider reaches, as the matrix names it. */
function targetName(provider: Provider, kind: TargetKind): 'openai-chat' | 'openai-responses' | 'anthropic' {
  if (kind === 'anthropic') return 'anthropic';
  return provider === 'openai.responses' ? 'openai-responses' : 'openai-chat';
}

const CASES: Array<[Provider, TargetKind, boolean]> = [];
for (const provider of ['openai.chat', 'openai.responses', 'anthropic'] as const)
  for (const kind of ['openai', 'anthropic'] as const)
    for (const stream of [false, true]) CASES.push([provider, kind, stream]);

describe('Vercel AI SDK through the gateway', () => {
  it.each(CASES)(
    '%s, %s target, stream %s: tool round trip with cache tokens',
    async (provider, kind, stream) => {
      const pkg = provider === 'anthropic' ? '@ai-sdk/anthropic' : '@ai-sdk/openai';
      const factory =
        provider === 'anthropic' ? 'createAnthropic' : `createOpenAI().${provider.split('.')[1]}`;
      await checkClient(
        {
          client: pkg,
          how: `\`ai\` ${stream ? 'streamText' : 'generateText'}, \`${factory}\` baseURL \`/v1\`, model \`${LANE[kind]}\``,
          target: targetName(provider, kind),
          stream,
          checks: 'multi-step tool round trip, cache tokens in the SDK usage and the ledger',
        },
        async () => {
          scriptWeatherTurns(gw, kind);
          const mark = await ledgerMark(gw);
          const outcome = await runTools(provider, kind, stream);
          expect(outcome.text).toBe(ANSWER);
          expect(outcome.cacheRead).toEqual(CACHED);

          const bodies = upstreamBodies(gw, kind);
          expect(bodies).toHaveLength(2);
          expect(toolResultsOf(bodies[1]).map((r) => r.replaceAll('"', ''))).toEqual(CITIES.map(weatherOf));
          const rows = await ledgerRows(gw, mark);
          expect(rows.map((r) => r.status)).toEqual([200, 200]);
          expect(rows.map((r) => r.cachedTokens)).toEqual(CACHED);
        },
      );
    },
  );
});
