// "No 400 for any request field listed in Anthropic's Messages reference": every top-level
// field of the installed `@anthropic-ai/sdk`'s MessageCreateParamsBase (the GA API) and of
// its beta MessageCreateParamsBase (beta features, sent as body fields) is sent with a valid
// value to an Anthropic target and to an OpenAI-compatible target. The lists are read from
// the SDK's type declarations, so a field a newer SDK adds fails this test until it has a
// value below. temperature, top_p and top_k are in Anthropic's reference but no longer in
// this SDK's types; they are walked too.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type AiHarness, type TestCaller, useAiHarness, writeTempJson } from './support/ai-harness';
import { lanesConfig } from './support/lanes';

let h: AiHarness;
let url: string;
let caller: TestCaller;

useAiHarness(
  () => ({
    AI_LANES_CONFIG: writeTempJson(
      'lanes.json',
      lanesConfig(
        { claude: ['anthropic:claude-walk'], gpt: ['openai:gpt-walk'] },
        {
          image: ['openai:dall-e-3'],
          tts: ['openai:tts-1'],
          music: ['elevenlabs:music_v1'],
          soundfx: ['elevenlabs:sfx_v2'],
        },
      ),
    ),
    AI_ALLOWED_LANES: 'claude,gpt',
  }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

// The package's main file sits at its root (its exports hide package.json).
const SDK_ROOT = path.dirname(require.resolve('@anthropic-ai/sdk'));

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

const BASE = { max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] };

/** A valid value for every field but the base request's (`model`, `max_tokens`, `messages`). */
const VALUES: Record<string, unknown> = {
  // Anthropic's reference, not this SDK's types.
  temperature: 0.5,
  top_p: 0.9,
  top_k: 40,
  // GA.
  cache_control: { type: 'ephemeral', ttl: '5m' },
  container: 'container_walk',
  diagnostics: { previous_message_id: 'msg_walk' },
  inference_geo: 'us',
  metadata: { user_id: 'walker' },
  output_config: {
    effort: 'low',
    format: { type: 'json_schema', schema: { type: 'object', properties: {} } },
  },
  service_tier: 'auto',
  speed: 'standard',
  stop_sequences: ['END'],
  stream: true,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
  thinking: { type: 'enabled', budget_tokens: 1024 },
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  tools: [
    {
      name: 'lookup',
      description: 'Looks up.',
      input_schema: { type: 'object', properties: {} },
      strict: true,
    },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 1 },
  ],
  user_profile_id: 'uprof_walk',
  workspace_id: 'wrkspc_walk',
  // Beta.
  billing_policy: { type: 'billing_policy', bill_to: 'self' },
  compaction: { type: 'summarize', instructions: 'Keep decisions.' },
  context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
  fallback_credit_token: { token: 'fct_walk', mode: 'best_effort' },
  fallbacks: 'default',
  mcp_servers: [{ type: 'url', name: 'walk', url: 'https://mcp.example.com/mcp' }],
  output_format: { type: 'json_schema', schema: { type: 'object', properties: {} } },
  thread: { type: 'create' },
};

const GA = interfaceFields('resources/messages/messages.d.ts', 'MessageCreateParamsBase');
// `betas` is the SDK's way to set the anthropic-beta header, not a body field.
const BETA = interfaceFields('resources/beta/messages/messages.d.ts', 'MessageCreateParamsBase').filter(
  (f) => f !== 'betas',
);
const FIELDS = [...new Set([...GA, ...BETA, 'temperature', 'top_p', 'top_k'])].filter(
  (f) => !['model', 'max_tokens', 'messages'].includes(f),
);

async function send(model: string, field: string) {
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': caller.apiKey,
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify({ model, ...BASE, [field]: VALUES[field] }),
  });
  return { status: res.status, dropped: res.headers.get('x-gateway-dropped-params'), text: await res.text() };
}

describe('every top-level field of the Messages API', () => {
  it('is read from the SDK and has a value here', () => {
    expect(GA).toEqual(expect.arrayContaining(['model', 'max_tokens', 'messages', 'system', 'tools']));
    expect(BETA.length).toBeGreaterThan(GA.length);
    expect(FIELDS.filter((f) => !(f in VALUES))).toEqual([]);
  });

  it.each(FIELDS)('%s: an Anthropic target gets it as sent, no 400', async (field) => {
    const answer = await send('claude', field);
    expect({ status: answer.status, text: answer.text.slice(0, 300) }).toMatchObject({ status: 200 });
    const sent = h.anthropicRequests().at(-1)?.body as Record<string, unknown> | undefined;
    expect(sent?.[field]).toEqual(VALUES[field]);
    expect(answer.dropped).toBeNull();
  });

  it.each(FIELDS)(
    '%s: an OpenAI-compatible target gets it mapped or it is named as dropped, no 400',
    async (field) => {
      const answer = await send('gpt', field);
      expect({ status: answer.status, text: answer.text.slice(0, 300) }).toMatchObject({ status: 200 });
      const sent = h.openaiRequests().at(-1)?.body as Record<string, unknown> | undefined;
      expect(sent).toBeDefined();
      // A field the chat format has no place for never reaches the provider under its own name.
      const named = (answer.dropped ?? '').split(',').some((d) => d === field || d.startsWith(`${field}.`));
      const mapped = MAPPED_TO_CHAT[field];
      expect({ field, accounted: named || mapped !== undefined }).toEqual({ field, accounted: true });
      if (mapped) expect(sent).toHaveProperty(mapped);
      if (!mapped) expect(sent).not.toHaveProperty(field);
    },
  );
});

/** Fields the translation carries to the chat request (alone, as walked), and the chat field each lands in. */
const MAPPED_TO_CHAT: Record<string, string> = {
  temperature: 'temperature',
  top_p: 'top_p',
  metadata: 'user',
  output_config: 'response_format',
  stop_sequences: 'stop',
  stream: 'stream',
  system: 'messages',
  tools: 'tools',
};
