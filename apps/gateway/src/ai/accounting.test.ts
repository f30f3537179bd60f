import { EventEmitter } from 'node:events';
import { AppError } from '@platform/errors';
import { createLogger, createMemoryDestination } from '@platform/logging';
import type { Response } from 'express';
import type { BudgetActual, BudgetRequest } from '../budgets/budgets';
import { compilePrices } from '../usage/pricing';
import type { LedgerRecord } from '../usage/record';
import {
  type AccountingBase,
  type AccountingPorts,
  answerWith,
  billedCompletion,
  CLIENT_CLOSED_STATUS,
  runAccounted,
  toLedgerRecord,
} from './accounting';
import type { PreparedChat } from './chat-request';
import type { Target } from './config/lanes';
import { ClientGoneError, FallbackExhaustedError } from './fallback';
import type { AccountedRequest } from './reserve';

// The accounting frame and the ledger record against fakes: a fake clock, a
// ledger and budgets that record what they are asked, a scripted handler.

const A: Target = { provider: 'groq', model: 'a' };
const B: Target = { provider: 'openai', model: 'b' };
const T0 = Date.parse('2027-01-01T00:00:00Z');

const prices = compilePrices({
  // 2 micro-units per prompt token, 10 per completion token; from 2027-06 dearer.
  'groq/a': [
    { input: 2, output: 10, cached_input: 1, cache_write: 3 },
    { input: 4, output: 20, effective_from: '2027-06-01' },
  ],
  'openai/b': { input: 5, output: 50 },
  'openai/img': { per_request: 0.04 },
});

const base = (more: Partial<AccountingBase> = {}): AccountingBase => ({
  requestId: 'r1',
  clientRequestId: null,
  caller: { userId: 'u1', apiKeyId: 'k1' },
  projectId: 'p',
  endpoint: 'chat',
  lane: 'free',
  startedAt: T0,
  ...more,
});

const usage = (prompt: number, completion: number, total = prompt + completion) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: total,
});

describe('toLedgerRecord', () => {
  const at = (now: number) => ({ prices, currency: 'EUR', clock: () => now });

  it("prices the answering target's usage at the price in force when the request started", () => {
    const record = toLedgerRecord(
      at(T0 + 250),
      base(),
      { status: 200, target: A, usage: usage(100, 20) },
      {},
    );
    expect(record).toEqual(
      expect.objectContaining({
        provider: 'groq',
        model: 'a',
        promptTokens: 100,
        completionTokens: 20,
        totalTokens: 120,
        costMicros: 100 * 2 + 20 * 10,
        currency: 'EUR',
        byok: false,
        latencyMs: 250,
        createdAt: T0 + 250,
      }),
    );
    const later = base({ startedAt: Date.parse('2027-07-01T00:00:00Z') });
    expect(
      toLedgerRecord(at(later.startedAt), later, { status: 200, target: A, usage: usage(100, 20) }, {})
        .costMicros,
    ).toBe(100 * 4 + 20 * 20);
  });

  it('cache reads and writes are priced at their own rates, and a stored key marks the record BYOK', () => {
    const outcome = { status: 200, target: A, usage: usage(100, 10), cache: { read: 40, write: 20 } };
    const record = toLedgerRecord(at(T0), base(), outcome, { groq: 'gsk-own' });
    expect(record.cachedTokens).toBe(40);
    expect(record.cacheWriteTokens).toBe(20);
    expect(record.costMicros).toBe(40 * 2 + 40 * 1 + 20 * 3 + 10 * 10);
    expect(record.byok).toBe(true);
  });

  it('a stream continued on another target prices each segment at its own target', () => {
    const outcome = {
      status: 200,
      target: B,
      usage: usage(30, 15),
      segments: [
        { target: A, usage: usage(10, 5) },
        { target: B, usage: usage(20, 10) },
      ],
    };
    expect(toLedgerRecord(at(T0), base(), outcome, {}).costMicros).toBe(10 * 2 + 5 * 10 + (20 * 5 + 10 * 50));
  });

  it('a failed request without a target costs nothing; a media request costs only when answered', () => {
    expect(
      toLedgerRecord(at(T0), base(), { status: 502, target: undefined, usage: null }, {}).costMicros,
    ).toBe(0);
    const media = base({ endpoint: 'image', media: { kind: 'image', count: 1, size: '1024x1024' } });
    const img = { provider: 'openai', model: 'img' };
    expect(toLedgerRecord(at(T0), media, { status: 200, target: img, usage: null }, {}).costMicros).toBe(
      40_000,
    );
    expect(toLedgerRecord(at(T0), media, { status: 504, target: img, usage: null }, {}).costMicros).toBe(0);
  });

  it('reasoning tokens reported outside completion_tokens are billed as output', () => {
    expect(billedCompletion(usage(10, 5, 40))).toBe(30);
    expect(billedCompletion(usage(10, 5))).toBe(5);
    expect(billedCompletion(null)).toBe(0);
  });
});

/** A response as the frame sees it: locals, its request's headers, close events. */
function fakeResponse(headers: Record<string, string> = {}): Response {
  const res = new EventEmitter() as unknown as Response & Record<string, unknown>;
  Object.assign(res, {
    locals: { requestId: 'req-1', auth: { kind: 'api_key', userId: 'u1', apiKeyId: 'k1', scope: 'all' } },
    req: { headers, get: (name: string) => headers[name.toLowerCase()] },
    destroyed: false,
    headersSent: false,
    writableFinished: false,
  });
  return res;
}

function frame(opts: { appendFails?: boolean; reserveFails?: AppError; completionCap?: number } = {}) {
  const events: string[] = [];
  const records: LedgerRecord[] = [];
  const settled: BudgetActual[] = [];
  const reserved: BudgetRequest[] = [];
  const reserve = async (request: BudgetRequest) => {
    reserved.push(request);
    events.push('reserve');
    if (opts.reserveFails) throw opts.reserveFails;
    return {
      completionCap: opts.completionCap,
      settle: async (actual: BudgetActual) => {
        settled.push(actual);
      },
    };
  };
  const ports: AccountingPorts = {
    prices,
    currency: 'EUR',
    clock: () => T0,
    admission: {
      budgets: { reserve },
      laneAccess: async () => {
        events.push('lane');
      },
      storedKeys: async () => ({}),
      budgetRequestOf: (caller, request) => ({
        userId: caller.userId,
        apiKeyId: caller.apiKeyId,
        projectId: request.projectId,
        promptTokens: 10,
        completionTokens: 100,
        price: undefined,
      }),
    },
    budgets: { reserve },
    ledger: {
      append: async (record) => {
        events.push('append');
        if (opts.appendFails) throw new Error('ledger down');
        records.push(record);
      },
    },
    metrics: { requestFinished: () => {} },
    logger: createLogger({
      service: 'accounting-test',
      destination: createMemoryDestination(),
      level: 'fatal',
    }),
    requestLog: null,
  };
  return { ports, events, records, settled, reserved };
}

const request: AccountedRequest = { projectId: 'p', endpoint: 'chat', lane: 'free' };

describe('runAccounted', () => {
  it('admits, runs, records once, settles at the actual use, and sends the last byte only after the record', async () => {
    const f = frame();
    await runAccounted(f.ports, fakeResponse(), request, async () =>
      answerWith({ status: 200, target: A, usage: usage(100, 20) }, () => {
        f.events.push('send');
      }),
    );
    expect(f.events).toEqual(['lane', 'reserve', 'append', 'send']);
    expect(f.records).toHaveLength(1);
    expect(f.records[0]).toEqual(
      expect.objectContaining({ requestId: 'req-1', status: 200, costMicros: 400 }),
    );
    expect(f.settled).toEqual([{ totalTokens: 120, costMicros: 400 }]);
  });

  it('a record that cannot be kept withholds the answer: 503, nothing sent', async () => {
    const f = frame({ appendFails: true });
    const run = runAccounted(f.ports, fakeResponse(), request, async () =>
      answerWith({ status: 200, target: A, usage: usage(1, 1) }, () => {
        f.events.push('send');
      }),
    );
    await expect(run).rejects.toEqual(new AppError('service_unavailable'));
    expect(f.events).not.toContain('send');
  });

  it('a refused admission reserves nothing, runs nothing and records nothing', async () => {
    const f = frame({ reserveFails: new AppError('rate_limited') });
    const handler = jest.fn();
    await expect(runAccounted(f.ports, fakeResponse(), request, handler)).rejects.toEqual(
      new AppError('rate_limited'),
    );
    expect(handler).not.toHaveBeenCalled();
    expect(f.records).toEqual([]);
  });

  it('an exhausted fallback is recorded with its status and last target, then thrown as its error', async () => {
    const f = frame();
    const error = new AppError('upstream_timeout');
    const run = runAccounted(f.ports, fakeResponse(), request, async () => {
      throw new FallbackExhaustedError(error, B);
    });
    await expect(run).rejects.toBe(error);
    expect(f.records[0]).toEqual(expect.objectContaining({ status: 504, provider: 'openai', costMicros: 0 }));
    expect(f.settled).toEqual([{ totalTokens: 0, costMicros: 0 }]);
  });

  it('a client that left is recorded as 499 and nothing is thrown', async () => {
    const f = frame();
    await runAccounted(f.ports, fakeResponse(), request, async () => {
      throw new ClientGoneError();
    });
    expect(f.records[0]?.status).toBe(CLIENT_CLOSED_STATUS);
  });

  it("a client's own x-request-id is kept for correlation, never as the ledger id", async () => {
    const f = frame();
    const answer = async () => answerWith({ status: 200, target: A, usage: usage(1, 1) }, () => {});
    await runAccounted(f.ports, fakeResponse({ 'x-request-id': 'REQ-1' }), request, answer);
    expect(f.records[0]?.clientRequestId).toBe('req-1');
    expect(f.records[0]?.requestId).not.toBe('req-1');
    expect(f.records[0]?.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a chat asks the upstream for no more than the budgets had left', async () => {
    const f = frame({ completionCap: 7 });
    const chat = { targets: [A], params: { max_tokens: 500 } } as unknown as PreparedChat;
    let asked: unknown;
    await runAccounted(f.ports, fakeResponse(), { ...request, chat }, async () => {
      asked = chat.params.max_tokens;
      return answerWith({ status: 200, target: A, usage: usage(1, 1) }, () => {});
    });
    expect(asked).toBe(7);
  });

  it("the key's model list narrows a chat's targets before the reservation", async () => {
    const f = frame();
    const res = fakeResponse();
    res.locals.auth = {
      kind: 'api_key',
      userId: 'u1',
      apiKeyId: 'k1',
      scope: 'all',
      rules: { models: ['b'] },
    };
    const chat = { targets: [A, B], params: {} } as unknown as PreparedChat;
    let targets: readonly Target[] = [];
    await runAccounted(f.ports, res, { ...request, chat }, async () => {
      targets = chat.targets;
      return answerWith({ status: 200, target: B, usage: usage(1, 1) }, () => {});
    });
    expect(targets).toEqual([B]);
  });
});
