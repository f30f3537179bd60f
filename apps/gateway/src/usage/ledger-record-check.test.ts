import { ledgerRecordProblem } from './ledger-isolate';
import type { LedgerRecord } from './record';

// The drain side's check of a ledger record: what it parks rather than
// inserting, and why (the reason an operator reads in usage_parked).

const ID = '0b9c3a4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e';
const good: LedgerRecord = {
  requestId: ID,
  clientRequestId: null,
  userId: ID,
  apiKeyId: null,
  projectId: 'p',
  endpoint: 'chat',
  lane: null,
  provider: null,
  model: null,
  status: 200,
  promptTokens: 1,
  completionTokens: 2,
  cachedTokens: 0,
  totalTokens: 3,
  costMicros: 5,
  currency: 'USD',
  estimated: false,
  byok: false,
  latencyMs: 12,
  createdAt: 1_700_000_000_000,
};

const problemWith = (more: Record<string, unknown>) => ledgerRecordProblem({ ...good, ...more });

describe('ledgerRecordProblem', () => {
  it('a well-formed record, with or without its optional fields, has no problem', () => {
    expect(ledgerRecordProblem(good)).toBeNull();
    expect(problemWith({ cacheWriteTokens: 3, continued: true, lane: 'free', apiKeyId: ID })).toBeNull();
  });

  it('what is not an object is not a record', () => {
    expect(ledgerRecordProblem(null)).toBe('not an object');
    expect(ledgerRecordProblem([good])).toBe('not an object');
    expect(ledgerRecordProblem('{}')).toBe('not an object');
  });

  it('ids must be UUIDs (the key and correlation ids may be null)', () => {
    expect(problemWith({ requestId: 'r1' })).toBe('requestId and userId must be UUIDs');
    expect(problemWith({ apiKeyId: 'k1' })).toBe('apiKeyId must be a UUID or null');
    expect(problemWith({ clientRequestId: 'x' })).toBe('clientRequestId must be a UUID or null');
  });

  it('text fields must be text', () => {
    expect(problemWith({ projectId: 1 })).toBe('projectId must be a string');
    expect(problemWith({ model: 5 })).toBe('model must be a string or null');
  });

  it('counts must be non-negative numbers within a Postgres integer', () => {
    expect(problemWith({ promptTokens: -1 })).toBe('promptTokens must be a count');
    expect(problemWith({ totalTokens: 2 ** 31 })).toBe('totalTokens must be a count');
    expect(problemWith({ status: '200' })).toBe('status must be a count');
    expect(problemWith({ cacheWriteTokens: -5 })).toBe('cacheWriteTokens must be a count');
  });

  it('cost, latency, time and flags have their own checks', () => {
    expect(problemWith({ costMicros: Number.NaN })).toBe('costMicros must be a number');
    expect(problemWith({ costMicros: 2 ** 60 })).toBe('costMicros must be a number');
    expect(problemWith({ latencyMs: Number.POSITIVE_INFINITY })).toBe('latencyMs must be a number');
    expect(problemWith({ createdAt: 'yesterday' })).toBe('createdAt must be a time');
    expect(problemWith({ byok: 'no' })).toBe('estimated and byok must be booleans');
    expect(problemWith({ continued: 1 })).toBe('continued must be a boolean');
  });
});
