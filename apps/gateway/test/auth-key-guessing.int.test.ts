import request from 'supertest';
import { INVALID_KEY_LIMIT } from '../src/auth/key-guessing';
import { useIdentityHarness } from './support/identity-harness';

const h = useIdentityHarness();

const me = (key: string, ip: string) =>
  request(h.app).get('/api/v1/me').set('x-api-key', key).set('X-Forwarded-For', ip);

describe('API-key guessing', () => {
  it('answers bad keys 429 rate_limited with Retry-After once an address sent too many; good keys and other addresses are unaffected', async () => {
    const { cookie } = await h.signIn();
    const { key } = await h.createKey(cookie);
    const guesser = '198.51.100.7';
    for (let i = 0; i < INVALID_KEY_LIMIT.max; i += 1) {
      const res = await me(`gw_guess${i}`, guesser);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid api key');
    }
    const refused = await me('gw_one-more-guess', guesser);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: 'rate_limited',
      code: 'rate_limited',
      request_id: expect.any(String),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    // A key that verifies is never refused for its address's bad keys (a neighbour behind the same NAT).
    const neighbour = await me(key, guesser);
    expect(neighbour.status).toBe(200);
    expect(neighbour.body.auth).toBe('api_key');
    expect((await me('gw_still-guessing', guesser)).status).toBe(429);
    const other = await me(key, '203.0.113.9');
    expect(other.status).toBe(200);
    expect(other.body.auth).toBe('api_key');
  });

  it('a missing header is not counted as a guess', async () => {
    const ip = '198.51.100.8';
    for (let i = 0; i < INVALID_KEY_LIMIT.max + 5; i += 1) {
      const res = await request(h.app).get('/api/v1/me').set('X-Forwarded-For', ip);
      expect(res.status).toBe(401);
    }
  });
});
