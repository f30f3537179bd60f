// "No 400 for any request field listed in the current OpenAI Chat Completions
// and Responses references": every top-level field of the installed `openai`
// SDK's ChatCompletionCreateParams and ResponseCreateParams is sent with a
// valid value, to an OpenAI-protocol target and to an Anthropic target. The
// field lists are read from the SDK's type declarations, so a field a newer SDK
// adds fails this test until it has a value below.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type TestCaller, useAiHarness, writeTempJson } from './support/ai-harness';
import { lanesConfig } from './support/lanes';

let url: string;
let caller: TestCaller;

useAiHarness(
  () => ({
    AI_LANES_CONFIG: writeTempJson(
      'lanes.json',
      lanesConfig(
        { gpt: ['openai:gpt-walk'], claude: ['anthropic:claude-walk'] },
        {
          image: ['openai:dall-e-3'],
          tts: ['openai:tts-1'],
          music: ['elevenlabs:music_v1'],
          soundfx: ['elevenlabs:sfx_v2'],
        },
      ),
    ),
    AI_ALLOWED_LANES: 'gpt,claude',
  }),
  (state) => {
    ({ caller, url } = state);
  },
  { listen: true },
);

// The package's main file sits at its root (its exports hide package.json).
const SDK_ROOT = path.dirname(require.resolve('openai'));

/** The top-level members of an exported interface of the SDK's declarations (4-space indented lines). */
function interfaceFields(file: string, name: string): string[] {
  const lines = readFileSync(path.join(SDK_ROOT, file), 'utf8').split('\n');
  const start = lines.indexOf(`export interface ${name} {`);
  if (start < 0) throw new Error(`${name} not found in ${file}`);
  const fields: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('}')) break;
    const match = /^ {4}([a-z_]+)\??:/.exec(line);
    if (match?.[1]) fields.push(match[1]);
  }
  return fields;
}

const fn = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };

/** A valid value for every Chat Completions field (`model` and `messages` are the base request). */
const CHAT_VALUES: Record<string, unknown> = {
  audio: { voice: 'alloy', format: 'mp3' },
  frequency_penalty: 0.1,
  function_call: 'auto',
  functions: [{ name: 'lookup', parameters: { type: 'object', properties: {} } }],
  logit_bias: { '50256': -100 },
  logprobs: true,
  max_completion_tokens: 64,
  max_tokens: 64,
  metadata: { team: 'walk' },
  modalities: ['text'],
  moderation: null,
  n: 1,
  parallel_tool_calls: true,
  prediction: { type: 'content', content: 'Hello' },
  presence_penalty: 0.1,
  prompt_cache_key: 'walk-1',
  prompt_cache_options: { mode: 'implicit' },
  prompt_cache_retention: '24h',
  reasoning_effort: 'low',
  response_format: {
    type: 'json_schema',
    json_schema: { name: 'answer', schema: { type: 'object', properties: {} }, strict: true },
  },
  safety_identifier: 'user-hash-1',
  seed: 7,
  service_tier: 'auto',
  stop: ['END'],
  store: false,
  stream: true,
  stream_options: { include_usage: true },
  temperature: 0.5,
  tool_choice: 'auto',
  tools: [fn],
  top_logprobs: 2,
  top_p: 0.9,
  user: 'walker',
  verbosity: 'low',
  web_search_options: { search_context_size: 'low' },
};

/** A valid value for every Responses field (`model` and `input` are the base request). */
const RESPONSES_VALUES: Record<string, unknown> = {
  access_programs: { ids: ['prog_1'] },
  background: false,
  background_options: { completion_window: 'soonest' },
  context_management: [{ type: 'compaction', compact_threshold: 1000 }],
  conversation: null,
  image: { context_compression: 'auto' },
  include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
  instructions: 'Be brief.',
  max_output_tokens: 64,
  max_tool_calls: 4,
  metadata: { team: 'walk' },
  moderation: null,
  parallel_tool_calls: false,
  previous_response_id: null,
  prompt: { id: 'pmpt_1', version: '2', variables: { city: 'Oslo' } },
  prompt_cache_key: 'walk-1',
  prompt_cache_options: { mode: 'implicit' },
  prompt_cache_retention: 'in_memory',
  reasoning: { effort: 'low', summary: 'auto' },
  safety_identifier: 'user-hash-1',
  service_tier: 'auto',
  store: false,
  stream: true,
  stream_options: { include_obfuscation: false },
  temperature: 0.5,
  text: {
    format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: {} }, strict: true },
    verbosity: 'low',
  },
  tool_choice: 'auto',
  tools: [
    { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false },
    { type: 'web_search' },
  ],
  top_logprobs: 2,
  top_p: 0.9,
  truncation: 'auto',
  user: 'walker',
};

function post(route: string, body: unknown) {
  return fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.apiKey}` },
    body: JSON.stringify(body),
  });
}

const CHAT_FIELDS = interfaceFields(
  'resources/chat/completions/completions.d.ts',
  'ChatCompletionCreateParamsBase',
);
const RESPONSES_FIELDS = interfaceFields('resources/responses/responses.d.ts', 'ResponseCreateParamsBase');

describe('the SDK field lists', () => {
  it('are read from the installed SDK and each has a value here', () => {
    expect(CHAT_FIELDS).toEqual(expect.arrayContaining(['messages', 'model', 'parallel_tool_calls']));
    expect(RESPONSES_FIELDS).toEqual(expect.arrayContaining(['input', 'model', 'reasoning', 'include']));
    const base = ['model', 'messages', 'input'];
    expect(CHAT_FIELDS.filter((f) => !base.includes(f) && !(f in CHAT_VALUES))).toEqual([]);
    expect(RESPONSES_FIELDS.filter((f) => !base.includes(f) && !(f in RESPONSES_VALUES))).toEqual([]);
  });
});

describe.each([
  ['an OpenAI-protocol target', 'gpt'],
  ['an Anthropic target', 'claude'],
])('every request field, to %s', (_name, model) => {
  it.each(CHAT_FIELDS.filter((f) => f in CHAT_VALUES))('POST /v1/chat/completions with %s', async (field) => {
    const res = await post('/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'Hello' }],
      [field]: CHAT_VALUES[field],
    });
    expect([res.status, field]).toEqual([200, field]);
    await res.text();
  });

  it.each(RESPONSES_FIELDS.filter((f) => f in RESPONSES_VALUES))(
    'POST /v1/responses with %s',
    async (field) => {
      const res = await post('/v1/responses', { model, input: 'Hello', [field]: RESPONSES_VALUES[field] });
      expect([res.status, field]).toEqual([200, field]);
      await res.text();
    },
  );

  it('POST /v1/responses with previous_response_id of a stored response', async () => {
    const first = await post('/v1/responses', { model, input: 'Hello', store: true });
    const { id } = (await first.json()) as { id: string };
    const res = await post('/v1/responses', { model, input: 'Again', previous_response_id: id });
    expect(res.status).toBe(200);
    await res.text();
  });

  it('POST /v1/responses with every field at once', async () => {
    const res = await post('/v1/responses', { model, input: 'Hello', ...RESPONSES_VALUES });
    expect(res.status).toBe(200);
    await res.text();
  });

  it('POST /v1/chat/completions with every field at once', async () => {
    const res = await post('/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'Hello' }],
      ...CHAT_VALUES,
    });
    expect(res.status).toBe(200);
    await res.text();
  });
});
