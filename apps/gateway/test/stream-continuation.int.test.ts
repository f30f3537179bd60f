import type { RedisKeyValueStore } from '@platform/db';
import {
  describeWith,
  eventually,
  FAULTS,
  needRedis,
  parsePrometheusText,
  type TestServer,
} from '@platform/testing';
import { PREFILL_REFUSAL_TTL_MS, prefillRefusalKey } from '../src/ai/prefill-memory';
import { CONTINUE_INSTRUCTION } from '../src/ai/streaming/continuation';
import { type AiHarness, startAiHarness, type TestCaller, writeTempJson } from './support/ai-harness';
import { FAILOVER_LANES, modelsAsked, STREAM_VIAS, type Via } from './support/failover';

/**
 * Issue 45: a stream cut after its 200 goes on where a target can take it.
 * The fallback that refuses the prefill is learned (here and, through Redis,
 * by the other instance) and the answer is finished by instruction without a
 * repeated span; with no target left the stream ends with an error naming the
 * cut, and the access log and the metrics say so. Through the native stream
 * and /v1, each with lanes of its own (a learned refusal outlives a test).
 */
const ANSWER = 'The quick brown fox jumps over the lazy dog.';
const VIAS = STREAM_VIAS.map((via, i) => ({ via, v: i === 0 ? 'n' : 'v' }));

const t = (model: string, acceptsPrefill?: boolean) => ({
  provider: 'openai',
  model,
  ...(acceptsPrefill === undefined ? {} : { accepts_prefill: acceptsPrefill }),
});
const lane = (targets: ReturnType<typeof t>[]) => ({
  default_model: targets[0]?.model ?? '',
  stream_idle_timeout_ms: 600,
  targets,
});
/** Per way in `v`: refuser (its fallback claims prefill and refuses it), skip, learned and solo lanes. */
function lanesOf(v: string) {
  return {
    [`refuser-${v}`]: lane([t(`r-${v}-primary`), t(`r-${v}-backup`, true)]),
    [`skip-${v}`]: lane([t(`s-${v}-primary`), t(`s-${v}-refuser`, true), t(`s-${v}-good`, true)]),
    [`learned-${v}`]: lane([t(`l-${v}-primary`), t(`l-${v}-backup`, true)]),
    [`solo-${v}`]: lane([t(`solo-${v}-only`)]),
    // A Claude fallback the lanes config says takes prefill (as the catalogue's flag once did).
    [`claude-${v}`]: lane([
      t(`c-${v}-primary`),
      { provider: 'anthropic', model: `claude-${v}-fallback`, accepts_prefill: true },
    ]),
  };
}
const LANES = {
  ...FAILOVER_LANES,
  lanes: {
    ...lanesOf('n'),
    ...lanesOf('v'),
    // Two Claude targets behind /v1/messages, whose request goes to Anthropic as the client sent it.
    messages: lane([
      { provider: 'anthropic', model: 'm-primary' },
      { provider: 'anthropic', model: 'm-backup' },
    ] as never),
  },
};

const redis = needRedis();

describeWith(redis)('stream continuation that knows its targets (issue 45)', () => {
  let server: TestServer | undefined;
  let h: AiHarness;
  let url: string;
  let otherUrl: string;
  let caller: TestCaller;

  beforeAll(async () => {
    server = await redis.start();
    h = await startAiHarness(
      {
        AI_LANES_CONFIG: writeTempJson('continuation-lanes.json', LANES),
        AI_ALLOWED_LANES: Object.keys(LANES.lanes).join(','),
        AI_UPSTREAM_TIMEOUT_MS: '3000',
      },
      { redisUrl: server.url },
    );
    url = (await h.listen()).url;
    // Another replica on the same Redis: what one instance learned, the other must use.
    otherUrl = (await h.listen(h.startInstance())).url;
  });
  afterAll(async () => {
    await h?.close();
    await server?.close();
  });
  beforeEach(async () => {
    h.resetFakes();
    h.openai.set({ content: ANSWER });
    caller = await h.createCaller();
  });

  const lastMessages = (i: number) =>
    (h.openaiRequests()[i]?.body as { messages?: Array<{ role: string; content: string }> } | undefined)
      ?.messages ?? [];
  const storedTtlMs = (model: string, provider = 'openai') => {
    const kv = h.kv as RedisKeyValueStore;
    return kv.redis.pttl(`${kv.keyPrefix}${prefillRefusalKey({ provider, model })}`);
  };
  const logLines = () => h.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  /** The access-log line of the last stream `model` answered. */
  async function accessLine(model: string): Promise<Record<string, unknown>> {
    let found: Record<string, unknown> | undefined;
    await eventually(async () => {
      found = logLines().findLast((l) => typeof l.stream === 'string' && l.model === model);
      return found !== undefined;
    }, 5_000);
    return found ?? {};
  }
  async function recordOf(who: TestCaller) {
    await h.usage.flush();
    return h.prisma.usageRecord.findFirst({ where: { userId: who.userId } });
  }
  async function counter(name: string, labels: Record<string, string>): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    const family = parsePrometheusText(text).find((f) => f.name === name);
    return (family?.metrics ?? [])
      .filter((m) => Object.entries(labels).every(([k, val]) => m.labels?.[k] === val))
      .reduce((sum, m) => sum + Number(m.value), 0);
  }

  it('a /v1/messages stream passed through as sent is continued in the chat shape, by instruction', async () => {
    h.anthropic.setFor('m-primary', { content: ANSWER, failAfterChunks: 2 });
    h.anthropic.setFor('m-backup', { content: ANSWER });
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({
        model: 'messages',
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    const text = await res.text();
    const deltas = text
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l.includes('text_delta'))
      .map((l) => (JSON.parse(l.slice(6)) as { delta: { text: string } }).delta.text);
    // The backup started over: what was already sent is not sent again.
    expect(deltas.join('')).toBe(ANSWER);
    expect(text).toContain('message_stop');
    const backup = h.anthropicRequests()[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    // Not the client's body again, which would ask for the whole answer anew: the instruction.
    expect(backup.messages.at(-1)?.role).toBe('user');
    expect(JSON.stringify(backup.messages.at(-1)?.content)).toContain('Continue it from the exact character');
  });

  describe.each(VIAS)('$via.name', ({ via, v }: { via: Via; v: string }) => {
    it('a cut stream whose fallback refuses prefill is finished by instruction, no span repeated', async () => {
      const continued = { mode: 'instruction' };
      const before = await counter('ai_stream_continuations_total', continued);
      h.openai.setFor(`r-${v}-primary`, FAULTS.cutAfterTwoChunks);
      h.openai.setFor(`r-${v}-backup`, FAULTS.refusesPrefill);
      const answer = await via.send(url, caller, `refuser-${v}`);
      // The backup restated "quick "; the caller reads every word once.
      expect(answer).toMatchObject({ status: 200, text: ANSWER, complete: true });
      expect(modelsAsked(h)).toEqual([`r-${v}-primary`, `r-${v}-backup`, `r-${v}-backup`]);
      expect(lastMessages(1).at(-1)).toEqual({ role: 'assistant', content: 'The quick ' });
      expect(lastMessages(2).slice(-2)).toEqual([
        { role: 'assistant', content: 'The quick ' },
        { role: 'user', content: CONTINUE_INSTRUCTION },
      ]);
      // Learned for the cluster, with the documented TTL, and logged once.
      const ttl = await storedTtlMs(`r-${v}-backup`);
      expect(ttl).toBeGreaterThan(PREFILL_REFUSAL_TTL_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(PREFILL_REFUSAL_TTL_MS);
      expect(
        logLines().filter(
          (l) => l.model === `r-${v}-backup` && String(l.msg).includes('refuses assistant prefill'),
        ),
      ).toHaveLength(1);
      // The truth on the access-log line and in the metrics: continued, on which targets, how.
      const line = await accessLine(`r-${v}-backup`);
      expect(line).toMatchObject({
        stream: 'continued',
        targets: [`openai/r-${v}-primary`, `openai/r-${v}-backup`],
        continuations: ['instruction'],
        attempts: 3,
        res: { statusCode: 200 },
      });
      expect(await counter('ai_stream_continuations_total', continued)).toBe(before + 1);
      // The usage record: continued, priced over both targets' segments.
      expect(await recordOf(caller)).toMatchObject({ status: 200, model: `r-${v}-backup`, continued: true });
    });

    it("a Claude fallback refusing the prefill in Anthropic's words finishes the answer by instruction", async () => {
      h.openai.setFor(`c-${v}-primary`, FAULTS.cutAfterTwoChunks);
      // It starts the answer over when asked to continue: all of what was sent is removed.
      h.anthropic.setFor(`claude-${v}-fallback`, { refusePrefill: true, content: ANSWER });
      const answer = await via.send(url, caller, `claude-${v}`);
      expect(answer).toMatchObject({ status: 200, text: ANSWER, complete: true });
      const asked = h.anthropicRequests().map((r) => r.body as { messages: Array<{ role: string }> });
      expect(asked.map((b) => b.messages.at(-1)?.role)).toEqual(['assistant', 'user']);
      expect(h.anthropicRequests()[0]?.status).toBe(400);
      expect(await storedTtlMs(`claude-${v}-fallback`, 'anthropic')).toBeGreaterThan(0);
    });

    it('a prefill refusal moves the continuation on to a target that takes prefill', async () => {
      h.openai.setFor(`s-${v}-primary`, FAULTS.cutAfterTwoChunks);
      h.openai.setFor(`s-${v}-refuser`, FAULTS.refusesPrefill);
      const answer = await via.send(url, caller, `skip-${v}`);
      expect(answer).toMatchObject({ status: 200, text: ANSWER, complete: true });
      expect(modelsAsked(h)).toEqual([`s-${v}-primary`, `s-${v}-refuser`, `s-${v}-good`]);
      expect(lastMessages(2).at(-1)).toEqual({ role: 'assistant', content: 'The quick ' });
    });

    it('a refusal learned on one instance is used by the next request on another', async () => {
      h.openai.setFor(`l-${v}-primary`, FAULTS.cutAfterTwoChunks);
      h.openai.setFor(`l-${v}-backup`, FAULTS.refusesPrefill);
      expect(await via.send(url, caller, `learned-${v}`)).toMatchObject({ text: ANSWER, complete: true });
      h.resetFakes();
      h.openai.set({ content: ANSWER });
      h.openai.setFor(`l-${v}-primary`, FAULTS.cutAfterTwoChunks);
      h.openai.setFor(`l-${v}-backup`, FAULTS.refusesPrefill);
      const answer = await via.send(otherUrl, caller, `learned-${v}`);
      expect(answer).toMatchObject({ status: 200, text: ANSWER, complete: true });
      // No prefill tried: the other instance read the refusal from Redis and asked by instruction at once.
      expect(modelsAsked(h)).toEqual([`l-${v}-primary`, `l-${v}-backup`]);
      expect(lastMessages(1).at(-1)).toEqual({ role: 'user', content: CONTINUE_INSTRUCTION });
    });

    it('with no target left the stream ends with an error naming the cut; log and metrics say so', async () => {
      const labels = { lane: `solo-${v}`, ending: 'error', error: 'upstream_error' };
      const before = await counter('ai_stream_endings_total', labels);
      const failedBefore = await counter('ai_requests_total', { lane: `solo-${v}`, status_class: '5xx' });
      h.openai.setFor(`solo-${v}-only`, FAULTS.cutAfterTwoChunks);
      const answer = await via.send(url, caller, `solo-${v}`);
      expect(answer).toMatchObject({ status: 200, text: 'The quick ', complete: false });
      const error = JSON.stringify(answer.error);
      expect(error).toContain('upstream AI service error');
      expect(error).toContain(
        `the stream from openai/solo-${v}-only was cut; no target was left to continue it`,
      );
      const line = await accessLine(`solo-${v}-only`);
      expect(line).toMatchObject({
        msg: 'request failed in band',
        level: 'warn',
        stream: 'error',
        stream_error: 'upstream_error',
        attempts: 1,
        res: { statusCode: 200 },
      });
      expect(String(line.stream_error_cause)).toContain('was cut');
      expect(await counter('ai_stream_endings_total', labels)).toBe(before + 1);
      expect(await recordOf(caller)).toMatchObject({ status: 502, continued: false });
      expect(await counter('ai_requests_total', { lane: `solo-${v}`, status_class: '5xx' })).toBe(
        failedBefore + 1,
      );
    });
  });
});
