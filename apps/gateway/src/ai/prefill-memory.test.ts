import { createMemoryStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { createPrefillMemory, PREFILL_REFUSAL_TTL_MS, prefillRefusalKey } from './prefill-memory';

const claude = { provider: 'anthropic', model: 'claude-new' };

function setup() {
  const kv = createMemoryStore();
  const logs = createMemoryDestination();
  const logger = createLogger({ service: 'test', destination: logs, level: 'debug' });
  return { kv, logs, logger };
}

describe('PrefillMemory (learned capability)', () => {
  it('a refusal learned by one process is known to another through the store, with the TTL', async () => {
    const { kv, logs, logger } = setup();
    const sets: Array<[string, string, number | undefined]> = [];
    const spy = {
      get: (k: string) => kv.get(k),
      set: (k: string, v: string, ttl?: number) => {
        sets.push([k, v, ttl]);
        return kv.set(k, v, ttl);
      },
    };
    const one = createPrefillMemory({ kv: spy, logger });
    const other = createPrefillMemory({ kv: spy, logger });
    expect(await other.refuses(claude)).toBe(false);
    await one.learn(claude, 'prefill_rejected');
    await one.learn(claude, 'prefill_rejected');
    expect(await one.refuses(claude)).toBe(true);
    expect(await other.refuses(claude)).toBe(true);
    expect(sets).toEqual([[prefillRefusalKey(claude), 'prefill_rejected', PREFILL_REFUSAL_TTL_MS]]);
    // Logged once per process.
    expect(logs.lines.filter((l) => l.includes('refuses assistant prefill'))).toHaveLength(1);
  });

  it('keeps what it learned for the process even when the store entry is gone or the store fails', async () => {
    const { logger } = setup();
    const failing = {
      get: () => Promise.reject(new Error('down')),
      set: () => Promise.reject(new Error('down')),
    };
    const memory = createPrefillMemory({ kv: failing, logger });
    expect(await memory.refuses(claude)).toBe(false);
    await memory.learn(claude, null);
    expect(await memory.refuses(claude)).toBe(true);
    expect(await createPrefillMemory({ kv: null, logger }).refuses(claude)).toBe(false);
  });
});
