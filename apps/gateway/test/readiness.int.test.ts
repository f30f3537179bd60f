import request from 'supertest';
import { useIdentityHarness } from './support/identity-harness';

const h = useIdentityHarness();

describe('GET /health/ready', () => {
  it('reports database, key-value store and SMTP when all are up', async () => {
    const res = await request(h.app).get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    // With Redis the ledger's drain is a dependency too (a stalled one makes the service not ready).
    const drain = h.kv.kind === 'redis';
    expect(res.body).toEqual({
      status: 'ready',
      timestamp: expect.any(String),
      service: 'gateway',
      checks: { database: 'up', key_value_store: 'up', smtp: 'up', ...(drain ? { usage_ledger: 'up' } : {}) },
      ...(drain ? { details: { usage_ledger: { backlog: 0, seconds_since_advance: 0 } } } : {}),
    });
  });

  it('/health stays the cheap liveness answer', async () => {
    const res = await request(h.app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', timestamp: expect.any(String), service: 'gateway' });
  });
});
