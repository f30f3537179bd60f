import { EnvError } from '@platform/service-kit';
import { loadGatewayEnv } from './env';

const base = { GATEWAY_SECRET: 'x'.repeat(32) };

describe('loadGatewayEnv', () => {
  it('runs outside production on defaults plus a secret', () => {
    const env = loadGatewayEnv(base);
    expect(env).toMatchObject({ PORT: 3002, SESSION_TTL_DAYS: 30, MAGIC_LINK_TTL_MINUTES: 15 });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.REDIS_URL).toBeUndefined();
  });

  it('refuses production without DATABASE_URL and REDIS_URL, naming each', () => {
    let caught: unknown;
    try {
      loadGatewayEnv({ ...base, NODE_ENV: 'production' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EnvError);
    const problems = (caught as EnvError).problems.join('\n');
    expect(problems).toMatch(/^DATABASE_URL: required in production/m);
    expect(problems).toMatch(/^REDIS_URL: required in production/m);
  });

  it('names a short GATEWAY_SECRET without echoing it', () => {
    let caught: unknown;
    try {
      loadGatewayEnv({ GATEWAY_SECRET: 'tiny-secret-value' });
    } catch (err) {
      caught = err;
    }
    expect((caught as EnvError).message).toMatch(/GATEWAY_SECRET/);
    expect((caught as EnvError).message).not.toContain('tiny-secret-value');
  });
});
