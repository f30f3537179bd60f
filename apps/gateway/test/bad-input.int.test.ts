import { expectMalformedPathRejected, expectRejected } from '@platform/testing';
import request from 'supertest';
import { APP_ORIGIN, uniqueEmail, useIdentityHarness } from './support/identity-harness';

const h = useIdentityHarness();

const LONE = '\ud800';

let ip = 0;
const requestLink = (body: object) =>
  request(h.app)
    .post('/api/v1/auth/request-magic-link')
    .set('X-Forwarded-For', `10.77.0.${(ip++ % 250) + 1}`)
    .send(body);

describe('lone UTF-16 surrogates in strings that reach URLs, mail headers or the database', () => {
  it.each([
    ['email', { email: `a${LONE}@example.com` }],
    ['redirect_url', { email: uniqueEmail(), redirect_url: `${APP_ORIGIN}/after/${LONE}` }],
  ])('request-magic-link with one in %s is 400 validation failed', async (field, body) => {
    expectRejected(await requestLink(body), { path: field });
  });
});

describe('malformed percent-encoding in a path', () => {
  it.each([
    ['DELETE', '/api/v1/keys/%E0%A4%A'],
    ['DELETE', '/api/v1/keys/%ZZ'],
  ])('%s %s is 400 validation failed without credentials, and no error-level log', async (method, path) => {
    const res = await request(h.app)[method === 'DELETE' ? 'delete' : 'get'](path);
    expectMalformedPathRejected(res, h.logs.lines);
  });
});
