import { PooledIdGenerator } from '../src/random-ids';

/** startTracing's id generator: the SDK's id format, never repeating, across refills of its pool. */
describe('pooled random ids', () => {
  it('gives 32 and 16 lowercase hex characters, not all zero, all distinct over many pool refills', () => {
    const ids = new PooledIdGenerator();
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 2000; i += 1) {
      const trace = ids.generateTraceId();
      const span = ids.generateSpanId();
      expect(trace).toMatch(/^[0-9a-f]{32}$/);
      expect(span).toMatch(/^[0-9a-f]{16}$/);
      expect(trace).not.toBe('0'.repeat(32));
      expect(span).not.toBe('0'.repeat(16));
      traces.add(trace);
      spans.add(span);
    }
    expect(traces.size).toBe(2000);
    expect(spans.size).toBe(2000);
  });
});
