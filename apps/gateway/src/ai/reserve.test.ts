import { compilePrices } from '../usage/pricing';
import type { PreparedChat } from './chat-request';
import { budgetRequestOf, capCompletion, combinedReservation, completionAllowanceOf } from './reserve';

// What a request reserves, and how a chat is held to what its budgets had left.

const A = { provider: 'groq', model: 'a' };
const B = { provider: 'openai', model: 'b' };
const prices = compilePrices({
  'groq/a': { input: 1, output: 1 },
  'openai/b': { input: 2, output: 10 },
  'openai/img': { per_request: 0.04 },
  'groq/img': { per_request: 0.01 },
});

const chatOf = (params: object, native?: PreparedChat['native']) =>
  ({ targets: [A, B], params, messages: [], native }) as unknown as PreparedChat;

describe('completionAllowanceOf', () => {
  it('the largest limit the request carries, in any of its fields', () => {
    expect(completionAllowanceOf(chatOf({ max_tokens: 50, max_completion_tokens: 80 }), 1000)).toBe(80);
    expect(completionAllowanceOf(chatOf({}, { format: 'anthropic', body: { max_tokens: 300 } }), 1000)).toBe(
      300,
    );
    expect(
      completionAllowanceOf(
        chatOf({}, { format: 'openai-responses', body: { max_output_tokens: 90 } }),
        1000,
      ),
    ).toBe(90);
  });

  it("without one, the server's allowance", () => {
    expect(completionAllowanceOf(chatOf({}), 1000)).toBe(1000);
    expect(completionAllowanceOf(chatOf({ max_tokens: 0 }), 1000)).toBe(1000);
  });
});

describe('capCompletion', () => {
  it('lowers max_tokens to the cap, and sets it when the request had no limit', () => {
    const chat = chatOf({ max_tokens: 500 });
    capCompletion(chat, 100);
    expect(chat.params).toEqual({ max_tokens: 100 });
    const none = chatOf({});
    capCompletion(none, 100);
    expect(none.params).toEqual({ max_tokens: 100 });
  });

  it('a request limited by max_completion_tokens keeps only that field (reasoning models refuse max_tokens)', () => {
    const chat = chatOf({ max_completion_tokens: 500 });
    capCompletion(chat, 100);
    expect(chat.params).toEqual({ max_completion_tokens: 100 });
  });

  it('never raises a limit below the cap', () => {
    const chat = chatOf({ max_tokens: 20 });
    capCompletion(chat, 100);
    expect(chat.params).toEqual({ max_tokens: 20 });
  });

  it("a passed-through body's own limit is capped too, and a Responses body gets one", () => {
    const anthropic = chatOf({}, { format: 'anthropic', body: { max_tokens: 4096 } });
    capCompletion(anthropic, 100);
    expect(anthropic.native?.body.max_tokens).toBe(100);
    const responses = chatOf({}, { format: 'openai-responses', body: {} });
    capCompletion(responses, 100);
    expect(responses.native?.body.max_output_tokens).toBe(100);
  });
});

describe('budgetRequestOf', () => {
  const caller = { userId: 'u1', apiKeyId: 'k1' };

  it("a chat reserves its prompt and allowance at the dearest target's price", () => {
    const chat = chatOf({ max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] });
    const request = budgetRequestOf(
      { prices, completionAllowance: 1000 },
      caller,
      {
        projectId: 'p',
        endpoint: 'chat',
        lane: 'free',
        chat,
      },
      0,
    );
    expect(request).toEqual(
      expect.objectContaining({ userId: 'u1', apiKeyId: 'k1', projectId: 'p', completionTokens: 64 }),
    );
    expect(request.price).toEqual(expect.objectContaining({ input: 2, output: 10 }));
    expect(request.promptTokens).toBeGreaterThan(0);
  });

  it('embeddings reserve their input and no completion', () => {
    const request = budgetRequestOf(
      { prices, completionAllowance: 1000 },
      caller,
      {
        projectId: 'p',
        endpoint: 'embeddings',
        lane: null,
        targets: [A],
        inputTokens: 12,
      },
      0,
    );
    expect(request).toEqual(expect.objectContaining({ promptTokens: 12, completionTokens: 0 }));
  });

  it("a media request reserves its dearest target's cost as a fixed cost", () => {
    const targets = [
      { provider: 'groq', model: 'img' },
      { provider: 'openai', model: 'img' },
    ];
    const request = budgetRequestOf(
      { prices, completionAllowance: 1000 },
      caller,
      {
        projectId: 'p',
        endpoint: 'soundfx',
        lane: null,
        targets,
        media: { kind: 'soundfx', seconds: 3 },
      },
      0,
    );
    expect(request.fixedCostMicros).toBe(40_000);
  });
});

describe('combinedReservation', () => {
  it('settles the first with the actual use and gives every continuation back', async () => {
    const settled: string[] = [];
    const part = (name: string) => ({
      completionCap: undefined,
      settle: async (actual: { totalTokens: number; costMicros: number }) => {
        settled.push(`${name}:${actual.totalTokens}`);
      },
    });
    const one = combinedReservation(part('first'));
    await one.settle({ totalTokens: 5, costMicros: 1 });
    expect(settled).toEqual(['first:5']);
    settled.length = 0;
    const many = combinedReservation(part('first'));
    many.add(part('second'));
    many.add(part('third'));
    await many.settle({ totalTokens: 9, costMicros: 1 });
    expect(settled.sort()).toEqual(['first:9', 'second:0', 'third:0']);
  });
});
