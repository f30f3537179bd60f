import request from 'supertest';
import type { UsageLedger } from '../src/usage/ledger';
import type { LedgerRecord } from '../src/usage/record';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { AI_ROUTES, allRoutesEnv } from './support/ai-routes';

/**
 * Issue 39, item 5: the route frame (runAccounted) sends an answer's last
 * byte only once its record is durable, for every AI route, media included.
 * With a ledger that keeps nothing, no route completes an answer: the JSON
 * and media routes answer 503, the streams end in an error event instead of
 * their success terminator. With one that keeps records, each answered
 * request appended exactly one before it completed.
 */
let h: AiHarness;
let caller: TestCaller;
useAiHarness(allRoutesEnv, (state) => {
  ({ h, caller } = state);
});

/** A ledger that refuses every record (every fallback included: what the frame sees when nothing keeps it). */
const refusing: UsageLedger = {
  append: async () => {
    throw new Error('nothing keeps this record');
  },
  flush: async () => {},
  close: async () => {},
};

const STREAMS = [
  { path: '/api/v1/ai/chat/stream', done: 'event: done' },
  { path: '/v1/chat/completions', done: '[DONE]' },
  { path: '/v1/messages', done: 'message_stop' },
  { path: '/v1/responses', done: 'response.completed' },
];

it('with no durable record, no AI route completes its answer', async () => {
  const app = h.startInstance({}, { ledgerAdapter: refusing });
  for (const route of AI_ROUTES) {
    const res = await route.send(app, caller, 'frame');
    // Of AI_ROUTES only the native stream streams (the /v1 streams follow).
    const stream = route.endpoint === 'stream' ? STREAMS[0] : undefined;
    if (stream) {
      expect([route.path, res.text.includes(stream.done)]).toEqual([route.path, false]);
    } else {
      expect([route.path, res.status]).toEqual([route.path, 503]);
    }
  }
  // The /v1 routes streamed.
  for (const s of STREAMS.slice(1)) {
    const route = AI_ROUTES.find((r) => r.path === s.path);
    if (!route) throw new Error(s.path);
    const res = await request(app)
      .post(s.path)
      .set('x-api-key', caller.apiKey)
      .send({ ...route.body('frame'), stream: true });
    expect([s.path, res.status, res.text.includes(s.done)]).toEqual([s.path, 200, false]);
  }
});

it('with a ledger that keeps records, each answer completes after its one append', async () => {
  const appended: LedgerRecord[] = [];
  const keeping: UsageLedger = {
    append: async (record) => {
      appended.push(record);
    },
    flush: async () => {},
    close: async () => {},
  };
  const app = h.startInstance({}, { ledgerAdapter: keeping });
  for (const route of AI_ROUTES) {
    const before = appended.length;
    const res = await route.send(app, caller, 'frame');
    expect([route.path, res.status, appended.length - before]).toEqual([route.path, 200, 1]);
    expect(appended.at(-1)?.endpoint).toBe(route.endpoint);
  }
});
