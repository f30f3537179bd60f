import { EnvError } from '@platform/service-kit';
import { loadLanesConfig } from './ai/config/lanes';
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

  it("REDIS_KEY_PREFIX: 'gateway:' by default, one deployment's own when set, refused when it is not a key part", () => {
    expect(loadGatewayEnv(base).REDIS_KEY_PREFIX).toBe('gateway:');
    expect(loadGatewayEnv({ ...base, REDIS_KEY_PREFIX: 'gw-staging:' }).REDIS_KEY_PREFIX).toBe('gw-staging:');
    expect(loadGatewayEnv({ ...base, REDIS_KEY_PREFIX: '' }).REDIS_KEY_PREFIX).toBe('gateway:');
    for (const bad of ['has space:', 'x'.repeat(65), 'star*:']) {
      expect(() => loadGatewayEnv({ ...base, REDIS_KEY_PREFIX: bad })).toThrow(/REDIS_KEY_PREFIX/);
    }
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

  describe('closed sets of values are checked at start, naming the variable and what is allowed', () => {
    const problemsOf = (extra: Record<string, string>): string => {
      try {
        loadGatewayEnv({ ...base, ...extra });
      } catch (err) {
        return (err as EnvError).problems.join('\n');
      }
      return '';
    };

    it('AI_PROVIDER_BASE_URLS: an unknown provider is refused, listing the allowed ones', () => {
      const problems = problemsOf({
        AI_PROVIDER_BASE_URLS: 'grok=http://127.0.0.1:1/v1,ollama=http://127.0.0.1:2/v1',
      });
      const allowed =
        '(allowed providers: openai, openrouter, groq, cerebras, google, anthropic, elevenlabs)';
      expect(problems.split('\n')).toEqual([
        `AI_PROVIDER_BASE_URLS: unknown provider "grok" ${allowed}`,
        `AI_PROVIDER_BASE_URLS: unknown provider "ollama" ${allowed}`,
      ]);
    });

    it('AI_PROVIDER_BASE_URLS: an entry without provider= or with a non-http URL is refused', () => {
      expect(problemsOf({ AI_PROVIDER_BASE_URLS: 'http://127.0.0.1:1/v1' })).toMatch(
        /^AI_PROVIDER_BASE_URLS: each entry must be provider=url/,
      );
      expect(problemsOf({ AI_PROVIDER_BASE_URLS: 'groq=ftp://x' })).toBe(
        'AI_PROVIDER_BASE_URLS: groq: must be an http:// or https:// URL',
      );
      expect(
        loadGatewayEnv({ ...base, AI_PROVIDER_BASE_URLS: 'groq=http://127.0.0.1:9/v1' })
          .AI_PROVIDER_BASE_URLS,
      ).toEqual(['groq=http://127.0.0.1:9/v1']);
    });

    it('booleans accept true/false/1/0/yes/no only', () => {
      expect(problemsOf({ SESSION_COOKIE_SECURE: 'ture' })).toMatch(
        /^SESSION_COOKIE_SECURE: .*"true"\|"false"/,
      );
    });

    it.each([
      ['SMTP_URL', 'postgres://mail.example.com', 'smtp:// or smtps://'],
      ['REDIS_URL', 'postgresql://127.0.0.1/x', 'redis:// or rediss://'],
      ['DATABASE_URL', 'redis://127.0.0.1:6379', 'postgres:// or postgresql://'],
      ['GATEWAY_PUBLIC_URL', 'gateway.example.com', 'http:// or https://'],
    ])('%s must use its own scheme', (name, value, schemes) => {
      expect(problemsOf({ [name]: value })).toBe(`${name}: must be a URL starting with ${schemes}`);
    });

    it('GATEWAY_CORS_ORIGINS: each entry must be an origin', () => {
      expect(problemsOf({ GATEWAY_CORS_ORIGINS: 'https://app.example.com/path' })).toMatch(
        /^GATEWAY_CORS_ORIGINS: each entry must be an origin/,
      );
      expect(
        loadGatewayEnv({ ...base, GATEWAY_CORS_ORIGINS: 'https://app.example.com,http://localhost:5173' })
          .GATEWAY_CORS_ORIGINS,
      ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    });

    it('AI_ALLOWED_LANES: a lane the lanes config lacks stops the start (checked with the config)', () => {
      // Lanes come from a file, so the check runs where the file is read: loadLanesConfig.
      expect(() => loadLanesConfig(undefined, ['free', 'standrad'])).toThrow(
        /lanes\.standrad: listed in AI_ALLOWED_LANES but not configured \(configured lanes: free, standard, premium\)/,
      );
    });
  });
});
