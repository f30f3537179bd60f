import { loadGatewayEnv } from '../env';
import { billingRulesOf } from './billing';
import { type BillableRow, usageEventOf } from './events';

const row = (over: Partial<BillableRow>): BillableRow => ({
  id: 'rec_1',
  user_id: 'u1',
  project_id: 'p1',
  endpoint: 'chat',
  lane: 'standard',
  model: 'gpt-4o-mini',
  total_tokens: 120,
  cost_micros: 90,
  byok: false,
  created_at: '2026-11-28T00:00:00.000Z',
  ...over,
});

const rulesOf = (env: Record<string, string>, media_billing?: { mode: 'metered'; meter?: string }) =>
  billingRulesOf(loadGatewayEnv({ NODE_ENV: 'test', GATEWAY_SECRET: 'a'.repeat(32), ...env }), {
    lanes: { standard: {} },
    media_billing,
  });

describe('the meter and value of a usage event', () => {
  it('media records go to BILLING_MEDIA_METER by cost, chat to the tokens meter by tokens', () => {
    const rules = rulesOf({ BILLING_METER: 'ai_tokens', BILLING_MEDIA_METER: 'ai_media_cost' });
    expect(usageEventOf(rules, row({})).event).toMatchObject({ meter: 'ai_tokens', value: 120 });
    expect(
      usageEventOf(rules, row({ endpoint: 'tts', lane: null, model: 'gpt-4o-mini-tts', total_tokens: 0 }))
        .event,
    ).toMatchObject({ meter: 'ai_media_cost', value: 90 });
  });

  it("the lanes config's media meter wins over BILLING_MEDIA_METER", () => {
    const rules = rulesOf({ BILLING_MEDIA_METER: 'env_media' }, { mode: 'metered', meter: 'lanes_media' });
    expect(usageEventOf(rules, row({ endpoint: 'image', lane: 'standard' })).event?.meter).toBe(
      'lanes_media',
    );
  });

  it('project and model meters (tokens) never take a media record that has a meter of its own', () => {
    const rules = rulesOf({
      BILLING_METER: 'ai_tokens',
      BILLING_MEDIA_METER: 'ai_media_cost',
      BILLING_PROJECT_METERS: 'p1=project_tokens',
      BILLING_MODEL_METERS: 'gpt-4o=gpt4o_tokens',
    });
    const tts = usageEventOf(rules, row({ endpoint: 'tts', lane: null, model: 'gpt-4o-mini-tts' })).event;
    expect(tts).toMatchObject({ meter: 'ai_media_cost', value: 90 });
    expect(usageEventOf(rules, row({ project_id: 'p2' })).event?.meter).toBe('gpt4o_tokens');
    expect(usageEventOf(rules, row({})).event?.meter).toBe('project_tokens');
  });

  it('without a media meter, a media record follows the lanes (start refuses that when the units differ)', () => {
    const rules = rulesOf({ BILLING_METER: 'cost', BILLING_QUANTITY: 'cost_micros' });
    expect(usageEventOf(rules, row({ endpoint: 'music', lane: null })).event).toMatchObject({
      meter: 'cost',
      value: 90,
    });
  });
});
