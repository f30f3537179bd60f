import type { AiRuntime } from '../../ai/runtime';
import { listAnthropicModels, toAnthropicModel } from './models';

// GET /v1/models in Anthropic's paging, over a config without providers.

const target = (model: string) => ({ provider: 'openai', model });
const rt = {
  allowedLanes: ['free', 'standard'],
  config: {
    lanes: {
      free: { targets: [target('a'), target('b'), target('a')] },
      standard: { targets: [target('c')] },
      hidden: { targets: [target('z')] },
    },
  },
} as unknown as Pick<AiRuntime, 'config' | 'allowedLanes'>;
// Ids in order: free, free/a, free/b, standard, standard/c.

const ids = (q: Record<string, unknown>) => listAnthropicModels(rt, q).data.map((m) => m.id);

describe('listAnthropicModels', () => {
  it('lists allowed lanes and their distinct models, first page of 20', () => {
    const page = listAnthropicModels(rt, {});
    expect(page.data.map((m) => m.id)).toEqual(['free', 'free/a', 'free/b', 'standard', 'standard/c']);
    expect(page).toMatchObject({ has_more: false, first_id: 'free', last_id: 'standard/c' });
  });

  it('limit cuts the page and says there is more', () => {
    const page = listAnthropicModels(rt, { limit: '2' });
    expect(page.data.map((m) => m.id)).toEqual(['free', 'free/a']);
    expect(page).toMatchObject({ has_more: true, first_id: 'free', last_id: 'free/a' });
  });

  it('after_id starts after that id', () => {
    expect(ids({ after_id: 'free/b' })).toEqual(['standard', 'standard/c']);
    expect(listAnthropicModels(rt, { after_id: 'free/b', limit: '1' }).has_more).toBe(true);
  });

  it('before_id ends before that id, taking the last `limit` ids', () => {
    const page = listAnthropicModels(rt, { before_id: 'standard', limit: '2' });
    expect(page.data.map((m) => m.id)).toEqual(['free/a', 'free/b']);
    expect(page.has_more).toBe(true);
    expect(listAnthropicModels(rt, { before_id: 'free/b', limit: '5' }).has_more).toBe(false);
  });

  it('a limit out of range is clamped to 1..1000; junk falls back to 20', () => {
    expect(ids({ limit: '0' })).toEqual(['free']);
    expect(ids({ limit: '-5' })).toEqual(['free']);
    expect(ids({ limit: 'ten' })).toHaveLength(5);
    expect(ids({ limit: 3 })).toHaveLength(5);
  });

  it('an empty page has null first and last ids', () => {
    expect(listAnthropicModels(rt, { after_id: 'standard/c' })).toEqual({
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });
});

describe('toAnthropicModel', () => {
  it('fills the required fields Anthropic clients read', () => {
    expect(toAnthropicModel('free')).toMatchObject({
      type: 'model',
      id: 'free',
      display_name: 'free',
      created_at: '1970-01-01T00:00:00Z',
      lifecycle: 'active',
    });
  });
});
