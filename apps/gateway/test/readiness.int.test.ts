import request from 'supertest';
import { useIdentityHarness } from './support/identity-harness';

const h = useIdentityHarness();

describe('GET /health/ready', () => {
  it('reports database, key-value store and SMTP when all are up', async () => {
    const res = await request(h.app).get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      status: 'ready',
      timestamp: expect.any(String),
      service: 'gateway',
      checks: { database: 'up', key_value_store: 'up', smtp: 'up' },
    });
  });

  it('/health stays the cheap liveness answer', async () => {
    const res = await request(h.app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', timestamp: expect.any(String), service: 'gateway' });
  });
});
