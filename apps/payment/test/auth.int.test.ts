import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { API_KEY, ROTATED_API_KEY, startHarness } from './support/harness';

const h = perTestFile(startHarness);

const PROTECTED: Array<[method: 'get' | 'post', path: string]> = [
  ['post', '/api/v1/checkout/subscription'],
  ['post', '/api/v1/checkout/item'],
  ['post', '/api/v1/checkout/cart'],
  ['get', '/api/v1/subscriptions/user_1/prod_1'],
  ['post', '/api/v1/portal'],
  ['get', '/api/v1/purchases/user_1'],
  ['get', '/api/v1/entitlements/user_1'],
  ['post', '/api/v1/sync/user_1'],
];

describe('API key authentication', () => {
  it.each(PROTECTED)('%s %s without X-API-Key is 401 missing api key', async (method, path) => {
    const res = await request(h.app)[method](path).send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'missing api key',
      code: 'missing_api_key',
      request_id: expect.any(String),
    });
    expect(res.headers['x-request-id']).toBe(res.body.request_id);
  });

  it.each(PROTECTED)('%s %s with a wrong key is 401 invalid api key', async (method, path) => {
    const res = await request(h.app)[method](path).set('X-API-Key', 'not-the-right-key-at-all').send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'invalid api key',
      code: 'invalid_api_key',
      request_id: expect.any(String),
    });
  });

  it('an empty X-API-Key counts as missing', async () => {
    const res = await request(h.app).get('/api/v1/subscriptions/u/p').set('X-API-Key', '');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('missing api key');
  });

  it('a key that is a prefix of a configured key is refused', async () => {
    const res = await request(h.app).get('/api/v1/subscriptions/u/p').set('X-API-Key', API_KEY.slice(0, -1));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid api key');
  });

  it('both keys of a rotation are accepted', async () => {
    for (const key of [API_KEY, ROTATED_API_KEY]) {
      const res = await request(h.app).get('/api/v1/subscriptions/nobody/prod_x').set('X-API-Key', key);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('none');
    }
  });

  it('after rotation the retired key is refused', async () => {
    const app = h.buildApp({ PAYMENT_MS_API_KEY: ROTATED_API_KEY });
    const old = await request(app).get('/api/v1/subscriptions/nobody/prod_x').set('X-API-Key', API_KEY);
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('invalid api key');
    const current = await request(app)
      .get('/api/v1/subscriptions/nobody/prod_x')
      .set('X-API-Key', ROTATED_API_KEY);
    expect(current.status).toBe(200);
  });

  it('an unknown /api/v1 path needs a key before it is a 404', async () => {
    const anonymous = await request(h.app).get('/api/v1/nothing-here');
    expect(anonymous.status).toBe(401);
    const authed = await request(h.app).get('/api/v1/nothing-here').set('X-API-Key', API_KEY);
    expect(authed.status).toBe(404);
    expect(authed.body).toEqual({ error: 'not found', code: 'not_found', request_id: expect.any(String) });
  });

  it('the API key never appears in the logs', async () => {
    await request(h.app).get('/api/v1/subscriptions/nobody/prod_x').set('X-API-Key', API_KEY);
    await request(h.app)
      .get('/api/v1/subscriptions/nobody/prod_x')
      .set('X-API-Key', 'wrong-key-that-is-logged?');
    expect(h.logs.text()).not.toContain(API_KEY);
  });
});

describe('public routes', () => {
  it('GET /health needs no key', async () => {
    const res = await request(h.app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', timestamp: expect.any(String), service: 'payment' });
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
  });

  it('GET /openapi.json needs no key and documents every path, the key scheme and the errors', async () => {
    const res = await request(h.app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.0\./);
    const paths = Object.keys(res.body.paths);
    for (const path of [
      '/health',
      '/openapi.json',
      '/api/v1/checkout/subscription',
      '/api/v1/checkout/item',
      '/api/v1/checkout/cart',
      '/api/v1/subscriptions/{user_id}/{product_id}',
      '/api/v1/portal',
      '/api/v1/purchases/{user_id}',
      '/api/v1/entitlements/{user_id}',
      '/api/v1/sync/{user_id}',
      '/webhooks/stripe',
    ]) {
      expect(paths).toContain(path);
    }
    expect(res.body.components.securitySchemes).toEqual({
      ApiKeyAuth: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    const checkout = res.body.paths['/api/v1/checkout/subscription'].post;
    expect(checkout.security).toEqual([{ ApiKeyAuth: [] }]);
    expect(Object.keys(checkout.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
    expect(res.body.paths['/health'].get.security ?? []).toEqual([]);
  });
});

describe('GET /docs', () => {
  it('serves the API reference page without a key: Swagger UI from the service itself, no inline script', async () => {
    const res = await request(h.app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    // helmet's policy: scripts from this origin only, so the page can carry none inline.
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    const scripts = [...res.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts).toEqual([' src="/docs/assets/swagger-ui-bundle.js"', ' src="/docs/init.js"']);
    expect(res.text).not.toMatch(/https?:\/\/(?!localhost)/);
    for (const asset of [
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/assets/swagger-ui.css',
      '/docs/init.js',
    ]) {
      const got = await request(h.app).get(asset);
      expect({ asset, status: got.status }).toEqual({ asset, status: 200 });
    }
    const init = await request(h.app).get('/docs/init.js');
    expect(init.text).toContain("url: '/openapi.json'");
    expect(init.text).toContain('validatorUrl: null'); // no call to validator.swagger.io
    for (const other of [
      '/docs/assets/package.json',
      '/docs/assets/__proto__',
      '/docs/assets/..%2Fpackage.json',
    ])
      expect({ other, status: (await request(h.app).get(other)).status }).toEqual({ other, status: 404 });
  });
});
