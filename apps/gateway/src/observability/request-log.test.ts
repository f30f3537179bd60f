import type { LedgerRecord } from '../usage/record';
import type { AttemptLog } from './attempt-log';
import { toRequestLogRow } from './request-log';

// A ledger record and its attempts as one request-log row, without a database.

const record: LedgerRecord = {
  requestId: 'r1',
  userId: 'u1',
  apiKeyId: 'k1',
  projectId: 'default',
  endpoint: 'stream',
  lane: 'free',
  provider: 'groq',
  model: 'llama',
  status: 200,
  promptTokens: 10,
  completionTokens: 5,
  cachedTokens: 2,
  totalTokens: 15,
  costMicros: 123,
  currency: 'usd',
  estimated: false,
  byok: false,
  latencyMs: 80,
  createdAt: Date.parse('2026-01-02T03:04:05Z'),
};
const attempts: AttemptLog = {
  startedAt: 0,
  attempts: [
    { target: 'groq/llama', outcome: 'success', status: 200, retry: 0, start_ms: 5, duration_ms: 20 },
  ],
};

describe('toRequestLogRow', () => {
  it('copies the record, times the first token and dates the row', () => {
    const row = toRequestLogRow(record, attempts, {});
    expect(row).toMatchObject({
      requestId: 'r1',
      apiKeyId: 'k1',
      costMicros: 123,
      ttftMs: 25,
      userAgent: null,
      error: null,
      attempts: attempts.attempts,
    });
    expect(row.createdAt.toISOString()).toBe('2026-01-02T03:04:05.000Z');
  });

  it('cuts a long user agent to 256 characters and keeps the error', () => {
    const row = toRequestLogRow(record, attempts, { userAgent: 'a'.repeat(300), error: 'upstream_timeout' });
    expect(row.userAgent).toHaveLength(256);
    expect(row.error).toBe('upstream_timeout');
  });

  it('without captured content the prompt and answer keys stay undefined, not null', () => {
    const row = toRequestLogRow(record, attempts, {});
    expect(row.prompt).toBeUndefined();
    expect(JSON.stringify(row)).not.toContain('"prompt"');
    const captured = toRequestLogRow(record, attempts, { content: { prompt: 'p', answer: 'a' } as never });
    expect(captured).toMatchObject({ prompt: 'p', answer: 'a' });
  });
});
