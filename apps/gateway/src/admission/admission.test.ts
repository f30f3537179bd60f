import { createMemoryStore } from '@platform/db';
import { AppError, isAppError } from '@platform/errors';
import type { Response } from 'express';
import type { ApiKeyAuthContext } from '../auth/types';
import { type BudgetRequest, GateRefusedError, type Reservation } from '../budgets/budgets';
import { admit, admitUnreserved } from './admit';
import { aiLimitCheck } from './ai-rate';
import { callerOf } from './caller';
import { applyKeyTargetRules } from './key-targets';
import { type PendingAdmission, setPendingAdmission } from './pending';
import { rateRefusal } from './rate-refusal';

// The admission step's parts without a server: who calls, the key's target
// rules, the AI rate counter, the refusal it gives, and the order admit runs
// them in against fake budgets and a fake pending check.

const KEY: ApiKeyAuthContext = { kind: 'api_key', userId: 'u1', apiKeyId: 'k1', scope: 'all' };
const A = { provider: 'groq', model: 'a' };
const B = { provider: 'openai', model: 'b' };

function resWith(auth: unknown): Response {
  return { locals: { auth } } as unknown as Response;
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isAppError(err)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

describe('callerOf', () => {
  it('an API key caller carries its key id and rules; a session caller has no key', () => {
    const rules = { lanes: ['free'] };
    expect(callerOf(resWith({ ...KEY, rules }))).toEqual({ userId: 'u1', apiKeyId: 'k1', keyRules: rules });
    expect(callerOf(resWith({ kind: 'session', userId: 'u2', sessionId: 's' }))).toEqual({
      userId: 'u2',
      apiKeyId: null,
    });
  });

  it('a route mounted without its guard fails loudly rather than admitting nobody', () => {
    expect(() => callerOf(resWith(undefined))).toThrow('route is missing its authentication middleware');
  });
});

describe('applyKeyTargetRules', () => {
  it('without rules the request is untouched', () => {
    const chat = { targets: [A, B] };
    applyKeyTargetRules(undefined, { endpoint: 'chat', lane: 'free', chat });
    expect(chat.targets).toEqual([A, B]);
  });

  it('a lane off the key list is 403 key_lane_not_allowed; a media request is checked under its endpoint', () => {
    expect(() => applyKeyTargetRules({ lanes: ['paid'] }, { endpoint: 'chat', lane: 'free' })).toThrow(
      new AppError('key_lane_not_allowed'),
    );
    expect(() => applyKeyTargetRules({ lanes: ['image'] }, { endpoint: 'image', lane: null })).not.toThrow();
    expect(() => applyKeyTargetRules({ lanes: ['tts'] }, { endpoint: 'image', lane: null })).toThrow();
  });

  it("a chat keeps only the targets on the key's model list, by bare id or provider/model", () => {
    const chat = { targets: [A, B] };
    applyKeyTargetRules({ models: ['openai/b'] }, { endpoint: 'chat', lane: 'free', chat });
    expect(chat.targets).toEqual([B]);
    const bare = { targets: [A, B] };
    applyKeyTargetRules({ models: ['a'] }, { endpoint: 'chat', lane: 'free', chat: bare });
    expect(bare.targets).toEqual([A]);
  });

  it('a chat none of whose targets is allowed is 403 key_model_not_allowed, naming them', () => {
    const chat = { targets: [A] };
    const call = () => applyKeyTargetRules({ models: ['b'] }, { endpoint: 'chat', lane: 'free', chat });
    expect(call).toThrow(new AppError('key_model_not_allowed'));
  });

  it('a route with its own targets is refused unless every target is allowed', () => {
    const both = { endpoint: 'embeddings', lane: null, targets: [A, B] };
    expect(() => applyKeyTargetRules({ models: ['a'] }, both)).toThrow(new AppError('key_model_not_allowed'));
    expect(() => applyKeyTargetRules({ models: ['a', 'b'] }, both)).not.toThrow();
  });
});

describe('the AI rate', () => {
  it("a key's own requests_per_minute below the server's replaces its max on the same counter", () => {
    const limit = aiLimitCheck({ kv: createMemoryStore(), perMinute: 100 });
    const plain = limit.counterOf(KEY);
    expect(plain).toEqual({ key: 'rl:ai:key:k1', max: 100, windowMs: 60_000 });
    const own = limit.counterOf({ ...KEY, rules: { requests_per_minute: 5 } });
    expect(own).toEqual({ ...plain, max: 5, keyRule: { apiKeyId: 'k1' } });
    // Above the server's limit the server's wins.
    expect(limit.counterOf({ ...KEY, rules: { requests_per_minute: 500 } })).toEqual(plain);
  });

  it('a session caller is counted per user', () => {
    const limit = aiLimitCheck({ kv: createMemoryStore(), perMinute: 10 });
    expect(limit.counterOf({ kind: 'session', userId: 'u9' } as never).key).toBe('rl:ai:user:u9');
  });

  it('check counts one hit per call and refuses past the max with Retry-After', async () => {
    const limit = aiLimitCheck({ kv: createMemoryStore(), perMinute: 2 });
    await limit.check(KEY);
    await limit.check(KEY);
    const err = await refusal(limit.check(KEY));
    expect(err.code).toBe('rate_limited');
    expect(Number(err.headers?.['Retry-After'])).toBeGreaterThanOrEqual(1);
  });

  it("a refusal by the key's own rule names the rule; the server's does not", () => {
    const own = rateRefusal({ key: 'x', max: 5, windowMs: 60_000, keyRule: { apiKeyId: 'k1' } }, 1500);
    expect(own.headers).toEqual({ 'Retry-After': '2' });
    expect(own.details).toEqual([
      { path: 'key.requests_per_minute', message: 'requests per minute of API key k1 (5) are spent' },
    ]);
    expect(rateRefusal({ key: 'x', max: 5, windowMs: 60_000 }, 1500).details).toBeUndefined();
  });
});

describe('admit', () => {
  const reservation: Reservation = { completionCap: undefined, settle: async () => {} };
  const budgetRequest: BudgetRequest = {
    userId: 'u1',
    apiKeyId: 'k1',
    projectId: 'p',
    promptTokens: 1,
    completionTokens: 1,
    price: undefined,
  };

  function setup(reserve: (gate: unknown) => Promise<Reservation>, events: string[] = []) {
    const ports = {
      budgets: {
        reserve: (_r: BudgetRequest, gate?: unknown) => {
          events.push(gate ? 'reserve+gate' : 'reserve');
          return reserve(gate);
        },
      },
      laneAccess: async (_u: string, lane: string | null) => {
        events.push(`lane:${lane}`);
      },
      storedKeys: async () => ({ groq: 'own' }),
      budgetRequestOf: () => {
        events.push('price');
        return budgetRequest;
      },
    };
    return { ports, events };
  }

  function pending(events: string[], refused?: (verdict: unknown) => Promise<void>): PendingAdmission {
    return {
      gate: { markerKey: 'm', rate: { key: 'r', max: 1, windowMs: 60_000 } },
      passed: () => events.push('passed'),
      refused: refused ?? (async () => {}),
      runAlone: async () => {
        events.push('alone');
      },
    };
  }

  it('runs rules, paid lane, pricing and reservation in that order, and returns the admitted request', async () => {
    const { ports, events } = setup(async () => reservation);
    const admitted = await admit(ports, resWith(KEY), { endpoint: 'chat', lane: 'free' }, 0);
    expect(events).toEqual(['lane:free', 'price', 'reserve']);
    expect(admitted).toEqual({
      caller: { userId: 'u1', apiKeyId: 'k1', keyRules: undefined },
      storedKeys: { groq: 'own' },
      budgetRequest,
      reservation,
    });
  });

  it('a media request asks the paid-lane check without a lane', async () => {
    const { ports, events } = setup(async () => reservation);
    await admit(ports, resWith(KEY), { endpoint: 'image', lane: 'paid', media: { kind: 'image' } }, 0);
    expect(events[0]).toBe('lane:null');
  });

  it('a key rule refusal comes before anything is asked of billing or budgets', async () => {
    const { ports, events } = setup(async () => reservation);
    const res = resWith({ ...KEY, rules: { lanes: ['other'] } });
    await expect(admit(ports, res, { endpoint: 'chat', lane: 'free' }, 0)).rejects.toThrow();
    expect(events).toEqual([]);
  });

  it("a cached key's pending check rides in the reservation and is confirmed when it passes", async () => {
    const { ports, events } = setup(async () => reservation);
    const res = resWith(KEY);
    setPendingAdmission(res, pending(events));
    await admit(ports, res, { endpoint: 'chat', lane: 'free' }, 0);
    expect(events).toEqual(['lane:free', 'price', 'reserve+gate', 'passed']);
  });

  it('a gate refusal gives the pending check its answer; a key that checks out reserves without the gate', async () => {
    let first = true;
    const { ports, events } = setup(async () => {
      if (first) {
        first = false;
        throw new GateRefusedError({ refused: 'revoked' });
      }
      return reservation;
    });
    const res = resWith(KEY);
    setPendingAdmission(
      res,
      pending(events, async (verdict) => {
        events.push(`refused:${(verdict as { refused: string }).refused}`);
      }),
    );
    await admit(ports, res, { endpoint: 'chat', lane: 'free' }, 0);
    expect(events).toEqual(['lane:free', 'price', 'reserve+gate', 'refused:revoked', 'reserve']);
  });

  it("a budget's 429 after the gate passed still confirms the key", async () => {
    const { ports, events } = setup(async () => {
      throw new AppError('rate_limited');
    });
    const res = resWith(KEY);
    setPendingAdmission(res, pending(events));
    await expect(admit(ports, res, { endpoint: 'chat', lane: 'free' }, 0)).rejects.toEqual(
      new AppError('rate_limited'),
    );
    expect(events).toContain('passed');
  });

  it('admitUnreserved makes the pending check on its own, once', async () => {
    const events: string[] = [];
    const res = resWith(KEY);
    setPendingAdmission(res, pending(events));
    expect(await admitUnreserved(res)).toEqual({ userId: 'u1', apiKeyId: 'k1', keyRules: undefined });
    await admitUnreserved(res);
    expect(events).toEqual(['alone']);
  });
});
