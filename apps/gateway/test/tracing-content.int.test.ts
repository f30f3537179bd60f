import type { Tracing } from '@platform/service-kit';
import { FAULTS, type OtlpReceiver, type ReceivedSpan } from '@platform/testing';
import { CAPTURE_MAX_CHARS } from '../src/observability/spans';
import type { AiHarness, TestCaller } from './support/ai-harness';
import { startTracedHarness, stopTracedHarness } from './support/tracing';

/**
 * Issue 43, traces: prompt and answer text reach spans only when the operator
 * sets OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (the default,
 * unset, is checked by tracing.int.test.ts). Then each chat attempt span
 * carries `gen_ai.input.messages` (and a non-streamed answer
 * `gen_ai.output.messages`), secrets masked as in the logs, size capped.
 */
const CLIENT = 3;
const PROMPT = 'the capture canary prompt 51d0';
const SECRET = 'sk-live-4f9a8b7c6d5e4f3a2b1c';

let receiver: OtlpReceiver;
let tracing: Tracing | undefined;
let h: AiHarness;
let url: string;
let caller: TestCaller;

beforeAll(async () => {
  ({ receiver, tracing, h, url } = await startTracedHarness({
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
  }));
});
afterAll(() => stopTracedHarness({ receiver, tracing, h }));
beforeEach(async () => {
  h.resetFakes();
  receiver.clear();
  caller = await h.createCaller();
});

function post(path: string, content: string) {
  return fetch(`${url}/api/v1/ai/chat/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
    body: JSON.stringify({ lane: 'free', project_id: 'p', messages: [{ role: 'user', content }] }),
  });
}

async function attemptSpans(count: number): Promise<ReceivedSpan[]> {
  await tracing?.flush();
  const attempts = (all: ReceivedSpan[]) => all.filter((s) => s.kind === CLIENT);
  return attempts(await receiver.waitFor((all) => attempts(all).length >= count));
}

it('a completion: the prompt and the answer on its attempt span, a bearer token masked', async () => {
  h.openai.set({ content: 'the captured answer 8e2b', usage: { prompt_tokens: 5, completion_tokens: 3 } });
  const res = await post('completions', `${PROMPT}; my header is Bearer ${SECRET}`);
  expect(res.status).toBe(200);
  const [attempt] = await attemptSpans(1);
  const input = String(attempt?.attributes['gen_ai.input.messages']);
  expect(JSON.parse(input)).toEqual([{ role: 'user', content: `${PROMPT}; my header is Bearer [REDACTED]` }]);
  expect(String(attempt?.attributes['gen_ai.output.messages'])).toContain('the captured answer 8e2b');
  expect(JSON.stringify(receiver.spans.map((s) => s.attributes))).not.toContain(SECRET);
});

it('a stream that fails over: the prompt on each attempt span', async () => {
  h.openai.setFor('free-a', FAULTS.rateLimitedNoHint);
  h.openai.setFor('free-b', { chunks: ['streamed ', 'text'] });
  const res = await post('stream', PROMPT);
  expect(res.status).toBe(200);
  await res.text();
  const attempts = await attemptSpans(2);
  for (const attempt of attempts)
    expect(String(attempt.attributes['gen_ai.input.messages'])).toContain(PROMPT);
});

it('a long prompt is cut at the cap and marked', async () => {
  h.openai.set({ content: 'ok' });
  const res = await post('completions', 'x'.repeat(CAPTURE_MAX_CHARS + 1000));
  expect(res.status).toBe(200);
  const [attempt] = await attemptSpans(1);
  const input = String(attempt?.attributes['gen_ai.input.messages']);
  expect(input.length).toBe(CAPTURE_MAX_CHARS + '…[truncated]'.length);
  expect(input.endsWith('…[truncated]')).toBe(true);
});
