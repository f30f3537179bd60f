import { z } from 'zod';
import { EnvError, envFields, heapSurgeSettings, parseEnv, serviceEnvFields, storageTimeouts } from '../src';
import { HEAP_SURGE_DEFAULTS } from '../src/heap-surge';

const schema = z.object({
  PORT: envFields.port(3000),
  KEYS: envFields.list().pipe(z.array(z.string().min(4)).min(1)),
  SECURE: envFields.bool(true),
});

describe('parseEnv', () => {
  it('applies defaults and parses lists and booleans', () => {
    expect(parseEnv(schema, { KEYS: 'abcd, efgh,,', SECURE: 'false' })).toEqual({
      PORT: 3000,
      KEYS: ['abcd', 'efgh'],
      SECURE: false,
    });
  });

  it('names every bad variable and never echoes a value', () => {
    let caught: unknown;
    try {
      parseEnv(schema, { PORT: 'eighty', KEYS: 'sk', SECURE: 'maybe' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EnvError);
    const message = (caught as EnvError).message;
    expect(message).toMatch(/PORT/);
    expect(message).toMatch(/KEYS/);
    expect(message).toMatch(/SECURE/);
    expect(message).not.toContain('eighty');
    expect(message).not.toContain('maybe');
  });

  it('treats empty strings as unset', () => {
    expect(parseEnv(schema, { PORT: '', KEYS: 'abcd' }).PORT).toBe(3000);
  });
});

describe('the compaction after a surge (serviceEnvFields, heapSurgeSettings)', () => {
  const service = z.object(serviceEnvFields({ port: 3000, dataDir: '.data/x' }));

  it('compacts a second after a surge by default; 0 turns it off; nonsense is refused', () => {
    expect(heapSurgeSettings(parseEnv(service, {}))).toEqual(HEAP_SURGE_DEFAULTS);
    expect(HEAP_SURGE_DEFAULTS.compactAfterMs).toBe(1000);
    expect(heapSurgeSettings(parseEnv(service, { HEAP_COMPACT_AFTER_SURGE_MS: '0' }))).toEqual({
      ...HEAP_SURGE_DEFAULTS,
      compactAfterMs: 0,
    });
    for (const bad of ['-1', 'soon', '600001'])
      expect(() => parseEnv(service, { HEAP_COMPACT_AFTER_SURGE_MS: bad })).toThrow(EnvError);
  });
});

describe('storage time-outs (serviceEnvFields)', () => {
  const service = z.object(serviceEnvFields({ port: 3000, dataDir: '.data/x' }));

  it("default to the product's short bounds: 750 ms per Redis command, 1.5 s per Postgres connection", () => {
    expect(storageTimeouts(parseEnv(service, {}))).toEqual({
      redisCommandTimeoutMs: 750,
      databaseConnectTimeoutMs: 1500,
    });
  });

  it('take an operator’s values and refuse nonsense', () => {
    const env = parseEnv(service, { REDIS_COMMAND_TIMEOUT_MS: '5000', DATABASE_CONNECT_TIMEOUT_MS: '8000' });
    expect(storageTimeouts(env)).toEqual({ redisCommandTimeoutMs: 5000, databaseConnectTimeoutMs: 8000 });
    for (const bad of [
      { REDIS_COMMAND_TIMEOUT_MS: '0' },
      { DATABASE_CONNECT_TIMEOUT_MS: 'soon' },
      { REDIS_COMMAND_TIMEOUT_MS: '600000' },
    ])
      expect(() => parseEnv(service, bad)).toThrow(EnvError);
  });
});
