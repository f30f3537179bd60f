import { requestContext } from '@platform/logging';
import type { Target } from '../src/ai/config/lanes';
import { collectAttempts, noteFailedAttempt, type RequestAttempts } from '../src/ai/request-attempts';

const target = { provider: 'openai', model: 'm' } as Target;
const timeout = (latencyMs: number) => ({
  target,
  byok: false,
  outcome: 'timeout' as const,
  status: null,
  latencyMs,
});
const collection = (): RequestAttempts => ({ billable: [], log: undefined });

describe("a request's attempts: its first frame in the request's store, others in a run of their own", () => {
  it('collects into the request store, and keeps concurrent and nested frames apart', async () => {
    const first = collection();
    const second = collection();
    const inner = collection();
    await requestContext.run({ requestId: 'r' }, async () => {
      await Promise.all([
        collectAttempts(first, async () => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          noteFailedAttempt(timeout(1));
          await collectAttempts(inner, async () => noteFailedAttempt(timeout(3)));
          noteFailedAttempt(timeout(4));
        }),
        collectAttempts(second, async () => {
          noteFailedAttempt(timeout(2));
        }),
      ]);
      expect(requestContext.getStore()?.attempts).toBe(first);
    });
    expect(first.billable.map((a) => a.latencyMs)).toEqual([1, 4]);
    expect(second.billable.map((a) => a.latencyMs)).toEqual([2]);
    expect(inner.billable.map((a) => a.latencyMs)).toEqual([3]);
  });

  it('keeps two requests apart, and collects outside any request', async () => {
    const a = collection();
    const b = collection();
    const free = collection();
    await Promise.all([
      requestContext.run({ requestId: 'a' }, () =>
        collectAttempts(a, async () => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          noteFailedAttempt(timeout(10));
        }),
      ),
      requestContext.run({ requestId: 'b' }, () =>
        collectAttempts(b, async () => noteFailedAttempt(timeout(20))),
      ),
      collectAttempts(free, async () => noteFailedAttempt(timeout(30))),
    ]);
    noteFailedAttempt(timeout(40));
    expect([a, b, free].map((c) => c.billable.map((x) => x.latencyMs))).toEqual([[10], [20], [30]]);
  });
});
