import { createServerBreaker } from './breaker';

describe('the MCP server breaker', () => {
  it('opens after consecutive failures, probes once after the cooldown, closes on success', () => {
    let t = 0;
    const breaker = createServerBreaker({ failures: 2, cooldownMs: 100, clock: () => t });
    breaker.record('s', false);
    expect(breaker.isOpen('s')).toBe(false);
    breaker.record('s', false);
    expect(breaker.isOpen('s')).toBe(true);
    expect(breaker.isOpen('other')).toBe(false);
    t = 100;
    expect(breaker.isOpen('s')).toBe(false); // the probe
    expect(breaker.isOpen('s')).toBe(true); // others wait while it runs
    breaker.record('s', true);
    expect(breaker.isOpen('s')).toBe(false);
  });

  it('a success between failures resets the count', () => {
    const breaker = createServerBreaker({ failures: 2, cooldownMs: 100, clock: () => 0 });
    breaker.record('s', false);
    breaker.record('s', true);
    breaker.record('s', false);
    expect(breaker.isOpen('s')).toBe(false);
  });
});
