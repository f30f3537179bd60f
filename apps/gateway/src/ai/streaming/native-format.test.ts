import { nativeStreamFormat } from './native-format';
import type { SseWriter } from './sse-writer';

// The native chat stream's events, written to a recording SseWriter.

function recorder(pushBack = false) {
  const sent: Array<[string, unknown]> = [];
  const drained = Promise.resolve();
  const sse = {
    send: (event: string, data: unknown) => {
      sent.push([event, data]);
      return pushBack ? drained : undefined;
    },
    sendData: () => undefined,
  } as unknown as SseWriter;
  return { sse, sent, drained };
}

const chunk = (...contents: Array<string | null | undefined>) =>
  ({ choices: contents.map((content) => ({ delta: { content } })) }) as never;
const target = { provider: 'openai', model: 'gpt-x' } as never;

describe('nativeStreamFormat', () => {
  it('sends each choice with content as a chunk event; empty deltas send nothing', () => {
    const { sse, sent } = recorder();
    const wait = nativeStreamFormat('r1').chunk(sse, chunk('Hel', '', null, 'lo'), target);
    expect(wait).toBeUndefined();
    expect(sent).toEqual([
      ['chunk', { content: 'Hel' }],
      ['chunk', { content: 'lo' }],
    ]);
  });

  it('returns the drain promise when the socket pushes back', () => {
    const { sse, drained } = recorder(true);
    expect(nativeStreamFormat('r1').chunk(sse, chunk('x'), target)).toBe(drained);
  });

  it('done names the model used, the finish reason and the usage', async () => {
    const { sse, sent } = recorder();
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    await nativeStreamFormat('r1').done(sse, { target, finishReason: 'stop', usage, cache: null } as never);
    expect(sent).toEqual([['done', { model_used: 'gpt-x', finish_reason: 'stop', usage }]]);
  });

  it('error carries the public error text and request id, and the cause only when there is one', async () => {
    const { sse, sent } = recorder();
    const format = nativeStreamFormat('req-9');
    await format.error(sse, 'upstream_timeout');
    await format.error(sse, 'upstream_error', 'openai stream broke');
    const [timeout, broken] = sent.map(([, data]) => data as { error: string; cause?: string });
    expect(sent[0]).toEqual(['error', { error: expect.any(String), request_id: 'req-9' }]);
    expect(timeout).not.toHaveProperty('cause');
    expect(broken).toMatchObject({ request_id: 'req-9', cause: 'openai stream broke' });
    expect(timeout?.error).not.toBe(broken?.error);
  });
});
