import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createPaymentClient } from '@platform/client';
import { API_KEY, type Harness, newUserId, startHarness } from '@platform/payment/testing';

let h: Harness;
let baseUrl: string;
let close: () => Promise<void>;

beforeAll(async () => {
  h = await startHarness();
  const server = h.buildApp({ PAYMENT_USAGE_METERS: 'tokens=ai_tokens' }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}, 60_000);
afterAll(async () => {
  await close?.();
  await h?.close();
});

describe('payment client: usage events', () => {
  test('records a batch, and the same batch again comes back as duplicates', async () => {
    const api = createPaymentClient({ baseUrl, apiKey: API_KEY });
    const events = [
      { id: randomUUID(), user_id: newUserId(), value: 12, timestamp: new Date().toISOString() },
      {
        id: randomUUID(),
        user_id: newUserId(),
        meter: 'tokens',
        value: 3,
        timestamp: new Date().toISOString(),
      },
    ];
    expect(await api.recordUsageEvents({ events })).toMatchObject({ stored: 2, duplicates: 0, conflicts: 0 });
    const again = await api.recordUsageEvents({ events });
    expect(again.results.map((r) => r.outcome)).toEqual(['duplicate', 'duplicate']);
    expect(await api.listMeterErrorReports({ limit: 5 })).toEqual({ reports: [] });
  });

  test('an event of an unknown meter is refused alone and listed as parked', async () => {
    const api = createPaymentClient({ baseUrl, apiKey: API_KEY });
    const good = { id: randomUUID(), user_id: newUserId(), value: 1, timestamp: new Date().toISOString() };
    const bad = { ...good, id: randomUUID(), meter: 'gpu_seconds' };
    const answer = await api.recordUsageEvents({ events: [good, bad] });
    expect(answer).toMatchObject({ stored: 1, refused: 1 });
    expect(answer.results[1]).toMatchObject({ id: bad.id, outcome: 'refused', reason: 'unknown_meter' });
    const { refusals } = await api.listRefusedUsageEvents({ limit: 100 });
    expect(refusals.find((r) => r.id === bad.id)).toMatchObject({ reason: 'unknown_meter', event: bad });
  });
});
