import { createHttpMetrics } from '@platform/logging';
import { createCircuitBreaker } from './circuit-breaker';
import type { ProviderCredential } from './providers/registry';

// The breaker against a fake clock: when a target is skipped, when one
// request probes it again, and what each outcome does to it.

const server = (provider: string): ProviderCredential => ({
  id: `${provider}:server`,
  provider,
  baseUrl: 'http://127.0.0.1:1',
  apiKey: 'k',
  byok: false,
});
const byok: ProviderCredential = { ...server('groq'), id: 'groq:byok:abc', byok: true };

type Metrics = ReturnType<typeof createHttpMetrics>['registry'];

/** A metric's value for groq/llama, or undefined when it has none. */
async function metricValue(registry: Metrics, name: string): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values.find((v) => v.labels.provider === 'groq' && v.labels.model === 'llama')?.value;
}

function setup(cooldownMs = 1000) {
  let now = 10_000;
  const registry = createHttpMetrics({ service: 'breaker-test', defaultMetrics: false }).registry;
  const breaker = createCircuitBreaker({ cooldownMs, clock: () => now, registry });
  return {
    breaker,
    registry,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('circuit breaker', () => {
  it('a target is closed until it fails', () => {
    const { breaker } = setup();
    expect(breaker.isOpen(server('groq'), 'llama')).toBe(false);
    breaker.record(server('groq'), 'llama', 'success');
    expect(breaker.isOpen(server('groq'), 'llama')).toBe(false);
  });

  it.each(['timeout', 'connection_error', 'server_error'] as const)(
    'a %s opens the target for the cooldown',
    (outcome) => {
      const { breaker, advance } = setup(1000);
      breaker.record(server('groq'), 'llama', outcome);
      expect(breaker.isOpen(server('groq'), 'llama')).toBe(true);
      advance(999);
      expect(breaker.isOpen(server('groq'), 'llama')).toBe(true);
    },
  );

  it.each([
    'rate_limited',
    'provider_refused',
    'request_rejected',
    'context_exceeded',
    'content_refused',
  ] as const)('a %s says nothing about the target: it stays closed', (outcome) => {
    const { breaker } = setup();
    breaker.record(server('groq'), 'llama', outcome);
    expect(breaker.isOpen(server('groq'), 'llama')).toBe(false);
  });

  it('one failing model or key never blocks another model, provider or key', () => {
    const { breaker } = setup();
    breaker.record(byok, 'llama', 'timeout');
    expect(breaker.isOpen(byok, 'llama')).toBe(true);
    expect(breaker.isOpen(byok, 'mixtral')).toBe(false);
    expect(breaker.isOpen(server('groq'), 'llama')).toBe(false);
    expect(breaker.isOpen(server('openai'), 'llama')).toBe(false);
  });

  it('after the cooldown exactly one request probes; the others keep skipping while it runs', () => {
    const { breaker, advance } = setup(1000);
    breaker.record(server('groq'), 'llama', 'server_error');
    advance(1000);
    expect(breaker.isOpen(server('groq'), 'llama')).toBe(false);
    expect(breaker.isOpen(server('groq'), 'llama')).toBe(true);
    expect(breaker.isOpen(server('groq'), 'llama')).toBe(true);
  });

  it('a probe that succeeds closes the circuit; one that fails opens it for another cooldown', () => {
    const { breaker, advance } = setup(1000);
    breaker.record(server('groq'), 'a', 'timeout');
    breaker.record(server('groq'), 'b', 'timeout');
    advance(1000);
    expect(breaker.isOpen(server('groq'), 'a')).toBe(false);
    expect(breaker.isOpen(server('groq'), 'b')).toBe(false);
    breaker.record(server('groq'), 'a', 'success');
    breaker.record(server('groq'), 'b', 'timeout');
    expect(breaker.isOpen(server('groq'), 'a')).toBe(false);
    expect(breaker.isOpen(server('groq'), 'b')).toBe(true);
    advance(999);
    expect(breaker.isOpen(server('groq'), 'b')).toBe(true);
  });

  it('retryAfterMs is the wait until the earliest target may be tried, never negative', () => {
    const { breaker, advance } = setup(1000);
    breaker.record(server('groq'), 'a', 'timeout');
    advance(400);
    breaker.record(server('groq'), 'b', 'timeout');
    const targets = [
      { credential: server('groq'), model: 'a' },
      { credential: server('groq'), model: 'b' },
    ];
    expect(breaker.retryAfterMs(targets)).toBe(600);
    advance(5000);
    expect(breaker.retryAfterMs(targets)).toBe(0);
  });

  it('counts openings, skips and probes, and shows server keys only in the open gauge', async () => {
    const { breaker, registry, advance } = setup(1000);
    breaker.record(server('groq'), 'llama', 'timeout');
    breaker.record(server('groq'), 'llama', 'timeout');
    breaker.record(byok, 'mixtral', 'timeout');
    breaker.isOpen(server('groq'), 'llama');
    advance(1000);
    breaker.isOpen(server('groq'), 'llama');
    expect(await metricValue(registry, 'ai_circuit_opened_total')).toBe(2);
    expect(await metricValue(registry, 'ai_circuit_skipped_total')).toBe(1);
    expect(await metricValue(registry, 'ai_circuit_probes_total')).toBe(1);
    // A BYOK key's circuit is counted but has no gauge series (one per key would leak their number).
    const gauge = (await registry.getMetricsAsJSON()).find((m) => m.name === 'ai_circuit_open');
    expect(gauge?.values.map((v) => v.labels.model)).toEqual(['llama']);
    expect(await metricValue(registry, 'ai_circuit_open')).toBe(1);
    breaker.record(server('groq'), 'llama', 'success');
    expect(await metricValue(registry, 'ai_circuit_open')).toBe(0);
  });
});
