import request from 'supertest';
import type { TestCaller } from './ai-harness';
import { PUBLIC_URL } from './ai-harness';

/** An app, or the base URL of one listening (cheaper under concurrent load). */
export type Target = Parameters<typeof request>[0];

/** One request per endpoint of the gateway, with valid credentials and a valid body. */
export type EndpointCall = {
  name: string;
  send(app: Target, caller: TestCaller): request.Test;
};

let sequence = 0;
const next = () => {
  sequence += 1;
  return sequence;
};
const ip = () => `10.88.${Math.floor(sequence / 250) % 250}.${(sequence % 250) + 1}`;

const chat = { lane: 'free', project_id: 'p1', messages: [{ role: 'user', content: 'hi' }] };

type Method = 'get' | 'post' | 'delete';
type Body = object | (() => object);

/**
 * `METHOD path` with the caller's API key or session cookie (a session call
 * that changes state also sends the app's Origin), and `body`, if any.
 */
const authorised =
  (auth: 'key' | 'session') =>
  (method: Method, path: string, body?: Body): EndpointCall => ({
    name: `${method.toUpperCase()} ${path}`,
    send: (app, c) => {
      let req = request(app)[method](path);
      req = auth === 'key' ? req.set('x-api-key', c.apiKey) : req.set('Cookie', c.cookie);
      if (auth === 'session' && method !== 'get') req = req.set('Origin', PUBLIC_URL);
      return body ? req.send(typeof body === 'function' ? body() : body) : req;
    },
  });
const withKey = authorised('key');
const withSession = authorised('session');

/** Every route of the gateway (src/app.ts) in its ordinary, authorised form. */
export const GATEWAY_ENDPOINTS: EndpointCall[] = [
  { name: 'GET /health', send: (app) => request(app).get('/health') },
  { name: 'GET /openapi.json', send: (app) => request(app).get('/openapi.json') },
  { name: 'GET /health/ready', send: (app) => request(app).get('/health/ready') },
  {
    name: 'POST /api/v1/auth/request-magic-link',
    send: (app) =>
      request(app)
        .post('/api/v1/auth/request-magic-link')
        .set('X-Forwarded-For', ip())
        .send({ email: `fault-${process.pid}-${next()}@example.com` }),
  },
  {
    name: 'POST /api/v1/auth/verify-code',
    send: (app) =>
      request(app)
        .post('/api/v1/auth/verify-code')
        .set('X-Forwarded-For', ip())
        .send({ code: `unknown-code-${next()}-abcdefghijklmnopqrstuvwxyz` }),
  },
  {
    name: 'GET /api/v1/auth/magic-link',
    send: (app) => request(app).get(`/api/v1/auth/magic-link?code=abc${next()}`),
  },
  withSession('get', '/api/v1/auth/session'),
  { ...withSession('get', '/api/v1/me'), name: 'GET /api/v1/me (session)' },
  { ...withKey('get', '/api/v1/me'), name: 'GET /api/v1/me (api key)' },
  withSession('post', '/api/v1/auth/api-keys', () => ({ name: `k${next()}` })),
  withSession('get', '/api/v1/auth/api-keys/list'),
  withSession('post', '/api/v1/auth/api-keys/revoke', { key_id: '00000000-0000-4000-8000-000000000000' }),
  withSession('get', '/api/v1/audit'),
  withSession('get', '/api/v1/audit/export'),
  withSession('post', '/api/v1/auth/api-keys/rules', {
    key_id: '00000000-0000-4000-8000-000000000000',
    rules: null,
    expires_at: null,
  }),
  withKey('post', '/api/v1/keys', { provider: 'groq', key: 'gsk_fault_test_key_1' }),
  withKey('get', '/api/v1/keys'),
  { ...withKey('delete', '/api/v1/keys/cerebras'), name: 'DELETE /api/v1/keys/{provider}' },
  { ...withKey('get', '/api/v1/usage?from=2026-01-01&to=2026-01-31'), name: 'GET /api/v1/usage' },
  withKey('post', '/api/v1/ai/chat/completions', chat),
  withKey('post', '/api/v1/ai/chat/stream', chat),
  withKey('post', '/api/v1/ai/image', { project_id: 'p1', prompt: 'a cat' }),
  withKey('post', '/api/v1/ai/tts', { project_id: 'p1', text: 'hello' }),
  withKey('post', '/api/v1/ai/music', { project_id: 'p1', prompt: 'piano' }),
  withKey('post', '/api/v1/ai/soundfx', { project_id: 'p1', prompt: 'rain' }),
];
