// The Anthropic TypeScript SDK (@anthropic-ai/sdk, from npm, unmodified: only baseURL and
// apiKey set) through the gateway, against the scripted upstream fakes: a system turn inside
// messages, countTokens and models.list, on an Anthropic target and an OpenAI-compatible one.

import Anthropic from '@anthropic-ai/sdk';
import {
  type AiHarness,
  startAiHarness,
  TEST_LANES,
  type TestCaller,
  writeTempJson,
} from '@platform/gateway/testing';
import { type CompatTarget, installedVersion, recordCompat, writeCompatDoc } from './support/compat-matrix';

const CLIENT = '@anthropic-ai/sdk';

const LANES = {
  lanes: {
    premium: {
      default_model: 'claude-sonnet-4-5',
      targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    },
    standard: { default_model: 'gpt-4.1-mini', targets: [{ provider: 'openai', model: 'gpt-4.1-mini' }] },
  },
  media: TEST_LANES.media,
  prices: {
    'anthropic/claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
    'openai/gpt-4.1-mini': { input: 1, output: 4, cached_input: 0.25 },
  },
};

let h: AiHarness;
let url: string;
let caller: TestCaller;

beforeAll(async () => {
  h = await startAiHarness({
    AI_LANES_CONFIG: writeTempJson('lanes.json', LANES),
    AI_ALLOWED_LANES: 'premium,standard',
  });
  ({ url } = await h.listen());
  caller = await h.createCaller();
}, 120_000);

afterAll(async () => {
  await h?.close();
  writeCompatDoc();
});

beforeEach(() => h.resetFakes());

function sdk(): Anthropic {
  return new Anthropic({ baseURL: url, apiKey: caller.apiKey, maxRetries: 0 });
}

/** Runs `check`, recording a compat row that says whether it passed. */
async function recorded(
  row: { how: string; target: CompatTarget; stream: boolean; checks: string },
  check: () => Promise<void>,
) {
  const base = { client: CLIENT, version: installedVersion(CLIENT), ...row };
  recordCompat({ ...base, result: 'fail', note: 'did not finish' });
  await check();
  recordCompat({ ...base, result: 'pass' });
}

/** A system turn inside messages: this SDK version's types have no such role, the API takes it. */
const WITH_SYSTEM_TURN = [
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi.' },
  { role: 'system', content: 'From now on answer in French.' },
  { role: 'user', content: 'How are you?' },
] as unknown as Anthropic.MessageParam[];

describe('Anthropic SDK through the gateway', () => {
  it('messages.create with a system turn in messages, on an Anthropic target (passed through)', async () => {
    const checks = 'system turn in messages, passed through as sent';
    await recorded(
      { how: '`messages.create`, model `premium`', target: 'anthropic', stream: false, checks },
      async () => {
        h.anthropic.set({ content: 'Très bien.' });
        const message = await sdk().messages.create({
          model: 'premium',
          max_tokens: 50,
          messages: WITH_SYSTEM_TURN,
        });
        expect(message.content).toEqual([{ type: 'text', text: 'Très bien.' }]);
        const [sent] = h.anthropicRequests();
        expect((sent?.body as { messages?: unknown[] } | undefined)?.messages).toEqual(WITH_SYSTEM_TURN);
        expect(sent?.body).toMatchObject({ model: 'claude-sonnet-4-5' });
      },
    );
  });

  it('messages.stream with a system turn, on an OpenAI-compatible target (folded into the system prompt)', async () => {
    const checks = 'system turn in messages, folded into the system message';
    await recorded(
      { how: '`messages.stream`, model `standard`', target: 'openai-chat', stream: true, checks },
      async () => {
        h.openai.set({ chunks: ['Très ', 'bien.'] });
        const stream = sdk().messages.stream({
          model: 'standard',
          max_tokens: 50,
          system: 'Be brief.',
          messages: WITH_SYSTEM_TURN,
        });
        const message = await stream.finalMessage();
        expect(message.content).toEqual([{ type: 'text', text: 'Très bien.' }]);
        const [sent] = h.openaiRequests();
        expect((sent?.body as { messages?: unknown[] } | undefined)?.messages).toEqual([
          { role: 'system', content: 'Be brief.\n\nFrom now on answer in French.' },
          { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
          { role: 'assistant', content: 'Hi.' },
          { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
        ]);
      },
    );
  });

  it("messages.countTokens on an Anthropic target is the provider's count", async () => {
    const checks = "the provider's count_tokens endpoint";
    await recorded(
      { how: '`messages.countTokens`, model `premium`', target: 'anthropic', stream: false, checks },
      async () => {
        h.anthropic.set({ inputTokens: 1234 });
        const { data, response } = await sdk()
          .messages.countTokens({ model: 'premium', system: 'Be brief.', messages: WITH_SYSTEM_TURN })
          .withResponse();
        expect(data).toEqual({ input_tokens: 1234 });
        expect(response.headers.get('x-gateway-token-count')).toBe('provider');
        const [sent] = h.anthropicRequests();
        expect(sent?.path).toBe('/v1/messages/count_tokens');
        expect(sent?.body).toMatchObject({ model: 'claude-sonnet-4-5', system: 'Be brief.' });
      },
    );
  });

  it("messages.countTokens on an OpenAI-compatible target is the gateway's estimate, marked so", async () => {
    const checks = "the gateway's tokenizer, marked as an estimate";
    await recorded(
      { how: '`messages.countTokens`, model `standard`', target: 'openai-chat', stream: false, checks },
      async () => {
        const short = await sdk().messages.countTokens({
          model: 'standard',
          messages: [{ role: 'user', content: 'hi' }],
        });
        const { data, response } = await sdk()
          .messages.countTokens({ model: 'standard', system: 'Be brief.', messages: WITH_SYSTEM_TURN })
          .withResponse();
        expect(response.headers.get('x-gateway-token-count')).toBe('estimate');
        expect(data.input_tokens).toBeGreaterThan(short.input_tokens);
        expect(h.openaiRequests()).toHaveLength(0);
      },
    );
  });

  it("models.list pages through every lane and <lane>/<model> in Anthropic's shape", async () => {
    const checks = "Anthropic's shape, auto-paging, retrieve";
    await recorded(
      { how: '`models.list`, `models.retrieve`', target: 'anthropic', stream: false, checks },
      async () => {
        const ids: string[] = [];
        for await (const model of sdk().models.list({ limit: 1 })) {
          expect(model).toMatchObject({ type: 'model', id: model.id, display_name: model.id });
          ids.push(model.id);
        }
        expect(ids).toEqual(['premium', 'premium/claude-sonnet-4-5', 'standard', 'standard/gpt-4.1-mini']);
        await expect(sdk().models.retrieve('premium/claude-sonnet-4-5')).resolves.toMatchObject({
          type: 'model',
          id: 'premium/claude-sonnet-4-5',
        });
      },
    );
  });

  it("an error on an Anthropic route is in Anthropic's shape: unknown model, unknown path", async () => {
    const err = await sdk()
      .messages.countTokens({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
    });
    const missing = await sdk()
      .models.retrieve('nope')
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    const batches = await sdk()
      .messages.batches.list()
      .catch((e: unknown) => e);
    expect(batches).toBeInstanceOf(Anthropic.NotFoundError);
    expect((batches as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
    });
  });
});
