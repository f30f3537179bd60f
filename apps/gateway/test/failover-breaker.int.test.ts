import { downFor, parsePrometheusText } from '@platform/testing';
import request from 'supertest';
import { type AiHarness, startAiHarness, type TestCaller, writeTempJson } from './support/ai-harness';
import { EVERY_VIA, FAILOVER_LANE_NAMES, FAILOVER_LANES, modelsAsked } from './support/failover';

/**
 * Issue 27, item 5: the breaker is per provider, key and model, so a lane
 * whose fallback is another model of the same provider (and key) keeps it;
 * and a primary that was down is used again within one cooldown of its
 * recovery, through a half-open probe.
 */
const COOLDOWN_MS = 1_500;
const DOWN_MS = 2_500;

let h: AiHarness;
let url: string;
let caller: TestCaller;

beforeAll(async () => {
  h = await startAiHarness({
    AI_LANES_CONFIG: writeTempJson('failover-lanes.json', FAILOVER_LANES),
    AI_ALLOWED_LANES: FAILOVER_LANE_NAMES,
    AI_UPSTREAM_TIMEOUT_MS: '1500',
    AI_CIRCUIT_COOLDOWN_MS: String(COOLDOWN_MS),
  });
  url = (await h.listen()).url;
});
afterAll(() => h.close());
beforeEach(async () => {
  h.resetFakes();
  caller = await h.createCaller();
});

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const res = await request(h.app).get('/metrics');
  const family = parsePrometheusText(res.text).find((f) => f.name === name);
  const found = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return found === undefined ? 0 : Number(found.value);
}

describe.each(EVERY_VIA)('a primary down for a while, then back: $name', (via) => {
  it('its fallback on the same provider stays in use, and the primary is used again within a cooldown of recovering', async () => {
    const openedBefore = await metric('ai_circuit_opened_total', { provider: 'openai', model: 'primary' });
    const recoversAt = Date.now() + DOWN_MS;
    h.openai.setFor('primary', downFor(DOWN_MS, { content: 'primary is back' }));
    h.openai.setFor('backup', { content: 'from backup' });

    const first = await via.send(url, caller, 'duo');
    expect(first).toMatchObject({ status: 200, text: 'from backup', complete: true });
    // Tried, retried once, then the other model of the same provider and key.
    expect(modelsAsked(h)).toEqual(['primary', 'primary', 'backup']);
    expect(await metric('ai_circuit_opened_total', { provider: 'openai', model: 'primary' })).toBe(
      openedBefore + 1,
    );
    expect(await metric('ai_circuit_open', { provider: 'openai', model: 'primary' })).toBe(1);
    // The breaker is per model: the backup is not cooling down with the primary.
    expect(await metric('ai_circuit_open', { provider: 'openai', model: 'backup' })).toBe(0);

    const second = await via.send(url, caller, 'duo');
    expect(second).toMatchObject({ status: 200, text: 'from backup' });
    expect(modelsAsked(h).slice(3)).toEqual(['backup']);

    // Keep asking; the primary must answer again soon after it recovered.
    let answer = second;
    while (answer.text !== 'primary is back' && Date.now() < recoversAt + 5_000) {
      await new Promise((r) => setTimeout(r, 100));
      answer = await via.send(url, caller, 'duo');
      expect(answer).toMatchObject({ status: 200, complete: true });
    }
    expect(answer.text).toBe('primary is back');
    // Within a cooldown (and one request) of recovering: a few seconds at most.
    expect(Date.now() - recoversAt).toBeLessThan(COOLDOWN_MS + 1_500);
    expect(await metric('ai_circuit_open', { provider: 'openai', model: 'primary' })).toBe(0);
    expect(await metric('ai_circuit_probes_total', { provider: 'openai', model: 'primary' })).toBeGreaterThan(
      0,
    );
    // While down the primary saw the first request's two tries and at most two per probe (probe and its retry).
    const whileDown = h.openaiRequests().filter((r) => r.model === 'primary' && r.status === 503).length;
    expect(whileDown).toBeLessThanOrEqual(2 + 2 * Math.ceil(DOWN_MS / COOLDOWN_MS));
  });
});
