import { AppError, ERROR_CODES, errorHandler, notFoundHandler } from '@platform/errors';
import { createLogger, createMemoryDestination, requestId } from '@platform/logging';
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { jsonBody } from '../src';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function buildApp() {
  const logs = createMemoryDestination();
  const logger = createLogger({ service: 'test', destination: logs });
  const app = express();
  app.use(requestId());
  app.use(jsonBody('1kb'));
  app.post('/echo', (req, res) => {
    res.json(z.object({ name: z.string() }).parse(req.body));
  });
  app.get('/app-error', () => {
    throw new AppError('maximum_keys');
  });
  app.get('/details', () => {
    throw new AppError('validation_failed', { details: [{ path: 'quantity', message: 'must be positive' }] });
  });
  app.get('/retry', () => {
    throw new AppError('rate_limited', { headers: { 'Retry-After': '7' } });
  });
  app.get('/store-down', () => {
    throw new AppError('service_unavailable', {
      cause: new Error('key lookup failed', { cause: new Error('Command timed out') }),
    });
  });
  app.get('/boom', async () => {
    throw new Error('db password=hunter2 at /srv/app/secret.ts:12');
  });
  app.use(notFoundHandler());
  app.use(errorHandler({ logger }));
  return { app, logs };
}

describe('error handler', () => {
  it('answers our errors with their status and exact string plus request_id', async () => {
    const res = await request(buildApp().app).get('/app-error');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'maximum_keys',
      code: 'maximum_keys',
      request_id: expect.stringMatching(UUID),
    });
    expect(res.headers['x-request-id']).toBe(res.body.request_id);
  });

  it('adds details on validation errors', async () => {
    const res = await request(buildApp().app).get('/details');
    expect(res.body.details).toEqual([{ path: 'quantity', message: 'must be positive' }]);
  });

  it('sets headers carried by the error', async () => {
    const res = await request(buildApp().app).get('/retry');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.body.error).toBe('rate_limited');
  });

  it('answers malformed JSON with 422 deserialization error', async () => {
    const res = await request(buildApp().app)
      .post('/echo')
      .set('Content-Type', 'application/json')
      .send('{"name":');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: 'deserialization error',
      code: 'deserialization_error',
      request_id: expect.stringMatching(UUID),
    });
  });

  it('answers a zod type error with 422 and field details', async () => {
    const res = await request(buildApp().app).post('/echo').send({ name: 5 });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('deserialization error');
    expect(res.body.details[0].path).toBe('name');
  });

  it('answers a body over the limit with 413 JSON', async () => {
    const res = await request(buildApp().app)
      .post('/echo')
      .send({ name: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: 'payload too large',
      code: 'payload_too_large',
      request_id: expect.stringMatching(UUID),
    });
  });

  it('answers unknown routes with JSON 404', async () => {
    const res = await request(buildApp().app).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: 'not found',
      code: 'not_found',
      request_id: expect.stringMatching(UUID),
    });
  });

  it('never leaks an internal message or stack in a 500, but logs it', async () => {
    const { app, logs } = buildApp();
    const res = await request(app).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: 'internal error',
      code: 'internal',
      request_id: expect.stringMatching(UUID),
    });
    expect(res.text).not.toContain('hunter2');
    expect(res.text).not.toContain('secret.ts');
    expect(logs.text()).toContain('request failed');
    expect(logs.text()).toContain(res.body.request_id);
  });

  it('answers a dependency failure 503 with the generic string, and logs what failed', async () => {
    const { app, logs } = buildApp();
    const res = await request(app).get('/store-down');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'service unavailable',
      code: 'service_unavailable',
      request_id: expect.stringMatching(UUID),
    });
    expect(res.text).not.toContain('timed out');
    const line = JSON.parse(logs.lines.find((l) => l.includes('dependency unavailable')) ?? '{}');
    expect(line.level).toBe('warn');
    expect(line.err).toMatchObject({ message: 'service unavailable', cause: 'key lookup failed' });
  });

  it('keeps every code status in the 4xx/5xx range and every string unique', () => {
    const strings = Object.values(ERROR_CODES).map((c) => c.error);
    expect(new Set(strings).size).toBe(strings.length);
    for (const c of Object.values(ERROR_CODES)) expect(c.status >= 400 && c.status < 600).toBe(true);
  });
});
