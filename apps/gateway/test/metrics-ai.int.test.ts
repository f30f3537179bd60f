import { type PromFamily, parsePrometheusText as parsePrometheusTextFormat } from '@platform/testing';
import request from 'supertest';
import { type AiHarness, startAiHarness } from './support/ai-harness';

let h: AiHarness;

beforeAll(async () => {
  h = await startAiHarness({});
});
afterAll(async () => {
  await h.close();
});

function readMetric(
  families: PromFamily[],
  name: string,
  labels: Record<string, string>,
): number | undefined {
  const family = families.find((f) => f.name === name);
  const metric = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return metric?.value === undefined ? undefined : Number(metric.value);
}

describe('GET /metrics', () => {
  it('exposes request counts and latency by route, upstream attempts by provider and outcome, and fallbacks', async () => {
    const caller = await h.createCaller();
    h.openai.setFor('free-a', { status: 503 });
    const chat = await request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send({ lane: 'free', project_id: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);

    const res = await request(h.app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const families = parsePrometheusTextFormat(res.text);

    expect(families.find((f) => f.name === 'ai_upstream_attempts_total')?.type).toBe('COUNTER');
    expect(
      readMetric(families, 'ai_upstream_attempts_total', { provider: 'groq', outcome: 'server_error' }),
    ).toBe(2);
    // The first 503 was retried once on the same target, then the request fell back.
    expect(
      readMetric(families, 'ai_upstream_retries_total', {
        endpoint: 'chat',
        provider: 'groq',
        outcome: 'server_error',
      }),
    ).toBe(1);
    expect(
      readMetric(families, 'ai_upstream_attempts_total', { provider: 'cerebras', outcome: 'success' }),
    ).toBe(1);
    expect(
      readMetric(families, 'ai_upstream_fallbacks_total', { endpoint: 'chat', from_provider: 'groq' }),
    ).toBe(1);
    expect(families.find((f) => f.name === 'ai_upstream_attempt_duration_seconds')?.type).toBe('HISTOGRAM');

    const requests = families.find((f) => f.name === 'http_requests_total');
    const chatRoute = requests?.metrics.find(
      (m) => m.labels?.route?.endsWith('/chat/completions') && m.labels.status === '200',
    );
    expect(Number(chatRoute?.value)).toBe(1);
    expect(families.find((f) => f.name === 'http_request_duration_seconds')?.type).toBe('HISTOGRAM');
  });
});
