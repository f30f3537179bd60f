import { z } from 'zod';
import { EnvError, envFields, parseEnv } from '../src';

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
