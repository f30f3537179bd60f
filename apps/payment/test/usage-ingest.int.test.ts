import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { API_KEY, newUserId, startHarness } from './support/harness';
import { postUsage, USAGE_ENV, usageEvent } from './support/usage';

const h = perTestFile(startHarness);
let app: ReturnType<typeof h.buildApp>;
beforeAll(() => {
  app = h.buildApp(USAGE_ENV);
});

const outbox = (ids: string[]) => h.prisma.usageEvent.findMany({ where: { id: { in: ids } } });

describe('POST /api/v1/usage-events', () => {
  test('stores a batch durably, default meter resolved, and answers per event', async () => {
    const userId = newUserId();
    const events = [
      usageEvent({ user_id: userId, value: 7 }),
      usageEvent({ user_id: userId, meter: 'cost', value: 3 }),
    ];
    const res = await postUsage(app, events);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      stored: 2,
      duplicates: 0,
      conflicts: 0,
      refused: 0,
      results: events.map((e) => ({ id: e.id, outcome: 'stored' })),
    });
    const rows = await outbox(events.map((e) => e.id));
    expect(rows.map((r) => [r.meter, r.eventName, r.value, r.status]).sort()).toEqual([
      ['cost', 'ai_cost', 3, 'pending'],
      ['tokens', 'ai_tokens', 7, 'pending'],
    ]);
  });

  test('concurrent duplicate sends store each event once and all are accepted', async () => {
    const userId = newUserId();
    const events = Array.from({ length: 40 }, (_, i) => usageEvent({ user_id: userId, value: i + 1 }));
    const answers = await Promise.all(Array.from({ length: 8 }, () => postUsage(app, events)));
    for (const res of answers) expect(res.status).toBe(200);
    const stored = answers.reduce((sum, res) => sum + res.body.stored, 0);
    const duplicates = answers.reduce((sum, res) => sum + res.body.duplicates, 0);
    expect(stored).toBe(40);
    expect(duplicates).toBe(7 * 40);
    const rows = await outbox(events.map((e) => e.id));
    expect(rows).toHaveLength(40);
    expect(rows.reduce((sum, r) => sum + r.value, 0)).toBe((40 * 41) / 2);
  });

  test('the same id with other fields is a conflict, stored nowhere, the rest of the batch is stored', async () => {
    const userId = newUserId();
    const first = usageEvent({ user_id: userId, value: 5 });
    await postUsage(app, [first]).expect(200);
    const other = usageEvent({ user_id: userId, value: 1 });
    const res = await postUsage(app, [{ ...first, value: 6 }, other, first, other]);
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { id: first.id, outcome: 'conflict' },
      { id: other.id, outcome: 'stored' },
      { id: first.id, outcome: 'duplicate' },
      { id: other.id, outcome: 'duplicate' },
    ]);
    const [row] = await outbox([first.id]);
    expect(row?.value).toBe(5);
  });

  test('one bad event inside a good batch is refused alone, parked, and the rest is stored', async () => {
    const userId = newUserId();
    const now = Date.now();
    const good = [usageEvent({ user_id: userId, value: 2 }), usageEvent({ user_id: userId, value: 3 })];
    const unknownMeter = usageEvent({ user_id: userId, meter: 'gpu', value: 1 });
    const old = usageEvent({
      user_id: userId,
      value: 1,
      timestamp: new Date(now - 40 * 86_400_000).toISOString(),
    });
    const ahead = usageEvent({
      user_id: userId,
      value: 1,
      timestamp: new Date(now + 20 * 60_000).toISOString(),
    });
    const zero = usageEvent({ user_id: userId, value: 0 });
    const res = await postUsage(app, [good[0], unknownMeter, old, ahead, zero, good[1]]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stored: 2, duplicates: 0, conflicts: 0, refused: 4 });
    expect(res.body.results.map((r: { outcome: string; reason?: string }) => [r.outcome, r.reason])).toEqual([
      ['stored', undefined],
      ['refused', 'unknown_meter'],
      ['refused', 'timestamp_too_old'],
      ['refused', 'timestamp_in_future'],
      ['refused', 'invalid_event'],
      ['stored', undefined],
    ]);
    expect((await outbox(good.map((e) => e.id))).map((r) => r.status)).toEqual(['pending', 'pending']);
    expect(await outbox([unknownMeter.id, old.id, ahead.id, zero.id])).toHaveLength(0);

    const parked = await request(app)
      .get('/api/v1/usage-events/refused')
      .set('X-API-Key', API_KEY)
      .expect(200);
    const mine = parked.body.refusals.filter((r: { id: string }) =>
      [unknownMeter.id, old.id, ahead.id, zero.id].includes(r.id),
    );
    expect(mine).toHaveLength(4);
    expect(mine.find((r: { id: string }) => r.id === unknownMeter.id)).toMatchObject({
      reason: 'unknown_meter',
      event: unknownMeter,
      times: 1,
    });
    expect((await request(app).get('/metrics')).text).toMatch(
      /payment_usage_events_refused_total\{[^}]*reason="unknown_meter"[^}]*\} [1-9]/,
    );

    // The operator fixes the event (here: the meter) and posts it again: stored, no longer parked.
    const fixed = { ...unknownMeter, meter: 'tokens' };
    expect((await postUsage(app, [fixed]).expect(200)).body.results).toEqual([
      { id: fixed.id, outcome: 'stored' },
    ]);
    const after = await request(app)
      .get('/api/v1/usage-events/refused')
      .set('X-API-Key', API_KEY)
      .expect(200);
    expect(after.body.refusals.map((r: { id: string }) => r.id)).not.toContain(fixed.id);
  });

  test('a caller clock ahead within the tolerated skew is stored and waits until Stripe takes it', async () => {
    h.clock.set(new Date());
    const event = usageEvent({
      user_id: newUserId(),
      value: 1,
      timestamp: new Date(Date.now() + 8 * 60_000).toISOString(),
    });
    expect((await postUsage(app, [event]).expect(200)).body.results).toEqual([
      { id: event.id, outcome: 'stored' },
    ]);
    const [row] = await outbox([event.id]);
    // Stripe takes timestamps up to 5 minutes ahead of its clock: the row is due 4 minutes before it
    // (payment's clock, here the test's, stands a moment before the database's when the row is written).
    const dueIn = (row?.nextAttemptAt.getTime() ?? 0) - (row?.createdAt.getTime() ?? 0);
    const ahead = new Date(event.timestamp).getTime() - h.clock.now().getTime();
    expect(dueIn).toBeGreaterThanOrEqual(ahead - 4 * 60_000 - 1000);
    expect(dueIn).toBeLessThanOrEqual(ahead - 4 * 60_000 + 1000);
  });

  test('a batch that is not a list of events with ids is refused whole with a clear error', async () => {
    const userId = newUserId();
    const ok = usageEvent({ user_id: userId, value: 1 });
    const noId = await postUsage(app, [ok, { user_id: userId, value: 1, timestamp: ok.timestamp }]);
    expect(noId.status).toBe(422);
    expect(noId.body).toMatchObject({ error: 'deserialization error', request_id: expect.any(String) });
    const badId = await postUsage(app, [ok, { ...ok, id: 'no spaces allowed' }]);
    expect(badId.status).toBe(400);
    expect(badId.body).toMatchObject({ error: 'validation failed', request_id: expect.any(String) });
    expect((await postUsage(app, [])).status).toBe(400);
    const tooMany = Array.from({ length: 1001 }, () => usageEvent({ user_id: userId, value: 1 }));
    expect((await postUsage(app, tooMany)).status).toBe(400);
    expect(await outbox([ok.id])).toHaveLength(0);
  });

  test('needs the API key, and answers 503 when usage billing is not configured', async () => {
    const event = usageEvent({ user_id: newUserId(), value: 1 });
    const anonymous = await request(app)
      .post('/api/v1/usage-events')
      .send({ events: [event] });
    expect(anonymous.status).toBe(401);
    const unconfigured = await postUsage(h.app, [event]);
    expect(unconfigured.status).toBe(503);
    expect(unconfigured.body.request_id).toEqual(expect.any(String));
    await request(app).get('/api/v1/usage-events/error-reports').set('X-API-Key', API_KEY).expect(200);
  });
});
