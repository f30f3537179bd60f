import {
  type AnthropicFake,
  anthropicAgentTurns,
  chatAgentTurns,
  type OpenAIFake,
  startAnthropicFake,
  startOpenAIFake,
} from '../src';

const TURNS = { tool: 'Bash', inputs: [{ command: 'echo a' }, { command: 'echo b' }], answerPrefix: 'Ran:' };
const BASH = { name: 'Bash', input_schema: { type: 'object', properties: {} } };

let anthropic: AnthropicFake;
let openai: OpenAIFake;

beforeAll(async () => {
  [anthropic, openai] = await Promise.all([startAnthropicFake(), startOpenAIFake()]);
});
afterAll(async () => {
  await Promise.all([anthropic.close(), openai.close()]);
});

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return res.json() as Promise<Record<string, unknown>>;
}

describe('agent turns on the fakes (respond)', () => {
  it('Anthropic: asks for parallel tool calls, then quotes the tool results; other requests fall to the script', async () => {
    anthropic.respond(anthropicAgentTurns(TURNS));
    anthropic.set({ content: 'side answer' });
    const headers = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' };
    const url = `${anthropic.baseURL}/v1/messages`;
    const base = { model: 'm', max_tokens: 10, tools: [BASH] };

    const ask = await post(url, headers, { ...base, messages: [{ role: 'user', content: 'go' }] });
    expect(ask.content).toEqual([
      { type: 'tool_use', id: 'toolu_fake_0', name: 'Bash', input: { command: 'echo a' } },
      { type: 'tool_use', id: 'toolu_fake_1', name: 'Bash', input: { command: 'echo b' } },
    ]);
    const results = [
      { type: 'tool_result', tool_use_id: 'toolu_fake_0', content: 'a\n' },
      { type: 'tool_result', tool_use_id: 'toolu_fake_1', content: [{ type: 'text', text: 'b' }] },
    ];
    const answer = await post(url, headers, { ...base, messages: [{ role: 'user', content: results }] });
    expect(answer.content).toEqual([{ type: 'text', text: 'Ran: a | b' }]);
    const side = await post(url, headers, {
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(side.content).toEqual([{ type: 'text', text: 'side answer' }]);
    anthropic.reset();
  });

  it('OpenAI chat: the same turns in the chat shape', async () => {
    openai.respond(chatAgentTurns(TURNS));
    const url = `${openai.baseURL}/chat/completions`;
    const headers = { authorization: 'Bearer k' };
    const tools = [{ type: 'function', function: { name: 'Bash', parameters: { type: 'object' } } }];
    const ask = await post(url, headers, { model: 'g', tools, messages: [{ role: 'user', content: 'go' }] });
    const calls = (ask.choices as Array<{ message: { tool_calls: Array<{ function: unknown }> } }>)[0]
      ?.message.tool_calls;
    expect(calls?.map((c) => c.function)).toEqual([
      { name: 'Bash', arguments: '{"command":"echo a"}' },
      { name: 'Bash', arguments: '{"command":"echo b"}' },
    ]);
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [] },
      { role: 'tool', tool_call_id: 'call_fake_0', content: 'a' },
      { role: 'tool', tool_call_id: 'call_fake_1', content: 'b' },
    ];
    const answer = await post(url, headers, { model: 'g', tools, messages });
    expect((answer.choices as Array<{ message: { content: string } }>)[0]?.message.content).toBe(
      'Ran: a | b',
    );
    openai.reset();
  });
});
