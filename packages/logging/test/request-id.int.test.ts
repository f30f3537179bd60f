import express from 'express';
import request from 'supertest';
import { requestId } from '../src';

function app() {
  const a = express();
  a.use(requestId());
  a.get('/', (_req, res) => {
    res.json({ id: res.locals.requestId });
  });
  return a;
}

describe('request id', () => {
  it('reuses a valid incoming UUID and echoes it', async () => {
    const id = '3d6f0a5e-7b1c-4d2e-9f8a-0b1c2d3e4f5a';
    const res = await request(app()).get('/').set('x-request-id', id);
    expect(res.headers['x-request-id']).toBe(id);
    expect(res.body.id).toBe(id);
  });

  it('replaces an invalid incoming id with a fresh UUID', async () => {
    const res = await request(app()).get('/').set('x-request-id', 'drop table; --');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-request-id']).not.toContain('drop');
  });

  it('generates distinct ids', async () => {
    const [a, b] = await Promise.all([request(app()).get('/'), request(app()).get('/')]);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});
