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
  {
    name: 'GET /api/v1/auth/session',
    send: (app, c) => request(app).get('/api/v1/auth/session').set('Cookie', c.cookie),
  },
  {
    name: 'GET /api/v1/me (session)',
    send: (app, c) => request(app).get('/api/v1/me').set('Cookie', c.cookie),
  },
  {
    name: 'GET /api/v1/me (api key)',
    send: (app, c) => request(app).get('/api/v1/me').set('x-api-key', c.apiKey),
  },
  {
    name: 'POST /api/v1/auth/api-keys',
    send: (app, c) =>
      request(app)
        .post('/api/v1/auth/api-keys')
        .set('Cookie', c.cookie)
        .set('Origin', PUBLIC_URL)
        .send({ name: `k${next()}` }),
  },
  {
    name: 'GET /api/v1/auth/api-keys/list',
    send: (app, c) => request(app).get('/api/v1/auth/api-keys/list').set('Cookie', c.cookie),
  },
  {
    name: 'POST /api/v1/auth/api-keys/revoke',
    send: (app, c) =>
      request(app)
        .post('/api/v1/auth/api-keys/revoke')
        .set('Cookie', c.cookie)
        .set('Origin', PUBLIC_URL)
        .send({ key_id: '00000000-0000-4000-8000-000000000000' }),
  },
  {
    name: 'POST /api/v1/keys',
    send: (app, c) =>
      request(app)
        .post('/api/v1/keys')
        .set('x-api-key', c.apiKey)
        .send({ provider: 'groq', key: 'gsk_fault_test_key_1' }),
  },
  { name: 'GET /api/v1/keys', send: (app, c) => request(app).get('/api/v1/keys').set('x-api-key', c.apiKey) },
  {
    name: 'DELETE /api/v1/keys/{provider}',
    send: (app, c) => request(app).delete('/api/v1/keys/cerebras').set('x-api-key', c.apiKey),
  },
  {
    name: 'GET /api/v1/usage',
    send: (app, c) =>
      request(app).get('/api/v1/usage?from=2026-01-01&to=2026-01-31').set('x-api-key', c.apiKey),
  },
  {
    name: 'POST /api/v1/ai/chat/completions',
    send: (app, c) => request(app).post('/api/v1/ai/chat/completions').set('x-api-key', c.apiKey).send(chat),
  },
  {
    name: 'POST /api/v1/ai/chat/stream',
    send: (app, c) => request(app).post('/api/v1/ai/chat/stream').set('x-api-key', c.apiKey).send(chat),
  },
  {
    name: 'POST /api/v1/ai/image',
    send: (app, c) =>
      request(app)
        .post('/api/v1/ai/image')
        .set('x-api-key', c.apiKey)
        .send({ project_id: 'p1', prompt: 'a cat' }),
  },
  {
    name: 'POST /api/v1/ai/tts',
    send: (app, c) =>
      request(app)
        .post('/api/v1/ai/tts')
        .set('x-api-key', c.apiKey)
        .send({ project_id: 'p1', text: 'hello' }),
  },
  {
    name: 'POST /api/v1/ai/music',
    send: (app, c) =>
      request(app)
        .post('/api/v1/ai/music')
        .set('x-api-key', c.apiKey)
        .send({ project_id: 'p1', prompt: 'piano' }),
  },
  {
    name: 'POST /api/v1/ai/soundfx',
    send: (app, c) =>
      request(app)
        .post('/api/v1/ai/soundfx')
        .set('x-api-key', c.apiKey)
        .send({ project_id: 'p1', prompt: 'rain' }),
  },
];

/** Ends the caller's session, so it is not in GATEWAY_ENDPOINTS, which tests fire concurrently. */
export const LOGOUT: EndpointCall = {
  name: 'POST /api/v1/auth/logout',
  send: (app, c) =>
    request(app).post('/api/v1/auth/logout').set('Cookie', c.cookie).set('Origin', PUBLIC_URL),
};
