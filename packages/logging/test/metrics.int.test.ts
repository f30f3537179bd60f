import { parsePrometheusText as parsePrometheusTextFormat } from '@platform/testing';
import express from 'express';
import request from 'supertest';
import { createHttpMetrics } from '../src';

describe('http metrics', () => {
  it('counts requests by route template and status in Prometheus text format', async () => {
    const metrics = createHttpMetrics({ service: 'test', defaultMetrics: false });
    const app = express();
    app.use(metrics.middleware);
    app.get('/items/:id', (_req, res) => {
      res.json({});
    });
    app.get('/metrics', metrics.handler);
    await request(app).get('/items/1');
    await request(app).get('/items/2');
    await request(app).get('/missing');
    const res = await request(app).get('/metrics');
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const families = parsePrometheusTextFormat(res.text);
    const total = families.find((f) => f.name === 'http_requests_total');
    expect(total?.type).toBe('COUNTER');
    const byRoute = Object.fromEntries(
      (total?.metrics ?? []).map((m) => [`${m.labels?.route} ${m.labels?.status}`, Number(m.value)]),
    );
    expect(byRoute['/items/:id 200']).toBe(2);
    expect(byRoute['unmatched 404']).toBe(1);
    expect(families.find((f) => f.name === 'http_request_duration_seconds')?.type).toBe('HISTOGRAM');
  });
});
