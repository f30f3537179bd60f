import { createHttpMetrics, type Registry } from '@platform/logging';
import type { LedgerRecord } from '../usage/record';
import { createTargetMetrics } from './metrics';

function record(over: Partial<LedgerRecord>): LedgerRecord {
  return {
    requestId: '00000000-0000-4000-8000-000000000001',
    clientRequestId: null,
    userId: '00000000-0000-4000-8000-000000000002',
    apiKeyId: null,
    projectId: 'p',
    endpoint: 'chat',
    lane: 'free',
    provider: 'groq',
    model: 'free-a',
    status: 200,
    promptTokens: 7,
    completionTokens: 7,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    totalTokens: 14,
    costMicros: 21,
    currency: 'USD',
    estimated: false,
    byok: false,
    latencyMs: 30,
    createdAt: 0,
    ...over,
  };
}

/** The series of a metric as /metrics shows them: `label=value,...` -> value. */
async function series(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`${name} is not registered`);
  const out: Record<string, number> = {};
  for (const v of (await metric.get()).values) {
    const labels = Object.entries(v.labels)
      .map(([k, l]) => `${k}=${l}`)
      .join(',');
    out[labels] = v.value;
  }
  return out;
}

describe('per-target metrics (batched counters)', () => {
  it('count every request once per label set, across scrapes, statuses of one class together', async () => {
    const { registry } = createHttpMetrics({ service: 'test', defaultMetrics: false });
    const metrics = createTargetMetrics(registry);
    metrics.requestFinished(record({}));
    metrics.requestFinished(record({}));
    metrics.requestFinished(record({ status: 429, model: null, provider: null, costMicros: 0 }));
    metrics.requestFinished(record({ status: 404, model: null, provider: null, costMicros: 0 }));
    metrics.requestFinished(record({ provider: 'cerebras', model: 'free-b', costMicros: 5 }));
    metrics.targetAttempt('chat', 'groq', 'free-a', 'success', 0.01);
    metrics.targetAttempt('chat', 'groq', 'free-a', 'timeout', 30);

    expect(await series(registry, 'ai_requests_total')).toEqual({
      'endpoint=chat,lane=free,model=free-a,status_class=2xx': 2,
      'endpoint=chat,lane=free,model=none,status_class=4xx': 2,
      'endpoint=chat,lane=free,model=free-b,status_class=2xx': 1,
    });
    expect(await series(registry, 'ai_spend_micros_total')).toEqual({
      'lane=free,provider=groq,model=free-a,currency=USD': 42,
      'lane=free,provider=cerebras,model=free-b,currency=USD': 5,
    });
    expect(await series(registry, 'ai_target_attempts_total')).toEqual({
      'provider=groq,model=free-a,outcome=success': 1,
      'provider=groq,model=free-a,outcome=timeout': 1,
    });

    // A second scrape adds only what came after the first; nothing is counted twice.
    metrics.requestFinished(record({ costMicros: 8 }));
    expect(await series(registry, 'ai_requests_total')).toEqual({
      'endpoint=chat,lane=free,model=free-a,status_class=2xx': 3,
      'endpoint=chat,lane=free,model=none,status_class=4xx': 2,
      'endpoint=chat,lane=free,model=free-b,status_class=2xx': 1,
    });
    expect(await series(registry, 'ai_spend_micros_total')).toEqual({
      'lane=free,provider=groq,model=free-a,currency=USD': 50,
      'lane=free,provider=cerebras,model=free-b,currency=USD': 5,
    });
    expect(await series(registry, 'ai_target_attempts_total')).toEqual({
      'provider=groq,model=free-a,outcome=success': 1,
      'provider=groq,model=free-a,outcome=timeout': 1,
    });
    // The text format Prometheus scrapes carries them too.
    expect(await registry.metrics()).toContain(
      'ai_requests_total{endpoint="chat",lane="free",model="free-a",status_class="2xx",service="test"} 3',
    );
  });
});
