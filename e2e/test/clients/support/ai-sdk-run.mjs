// Runs one Vercel AI SDK tool round trip in its own Node process (the SDK is
// ESM-only; Jest runs CommonJS) and prints its outcome as one JSON line.
// Argument: JSON {provider: 'openai.chat'|'openai.responses'|'anthropic',
// baseURL, apiKey, model, stream}.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const args = JSON.parse(process.argv[2] ?? '{}');
const settings = { apiKey: args.apiKey, baseURL: args.baseURL };

function model() {
  if (args.provider === 'anthropic') return createAnthropic(settings)(args.model);
  const openai = createOpenAI(settings);
  return args.provider === 'openai.chat' ? openai.chat(args.model) : openai.responses(args.model);
}

const tools = {
  get_weather: tool({
    description: 'The weather of a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  }),
};

const call = {
  model: model(),
  tools,
  stopWhen: stepCountIs(3),
  prompt: 'Weather in Oslo and Rome?',
  maxRetries: 0,
};
let text = '';
let steps;
if (args.stream) {
  const result = streamText({ ...call, onError: () => {} });
  for await (const piece of result.textStream) text += piece;
  steps = await result.steps;
} else {
  const result = await generateText(call);
  text = result.text;
  steps = result.steps;
}
const cacheRead = steps.map((s) => s.usage.inputTokenDetails.cacheReadTokens ?? null);
process.stdout.write(`${JSON.stringify({ text, cacheRead })}\n`);
