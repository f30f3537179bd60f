import type { AnthropicModel, AnthropicModelList } from '@platform/contract';
import type { AiRuntime } from '../../ai/runtime';
import { listModelIds } from '../models';

/** A lane has no release date: Anthropic's `created_at` is required, so the epoch stands in. */
const UNKNOWN_DATE = '1970-01-01T00:00:00Z';

/** One id `model` accepts (a lane or `<lane>/<model>`) in Anthropic's model shape. */
export function toAnthropicModel(id: string): AnthropicModel {
  return {
    type: 'model',
    id,
    display_name: id,
    created_at: UNKNOWN_DATE,
    capabilities: null,
    deprecated_at: null,
    lifecycle: 'active',
    line: null,
    max_input_tokens: null,
    max_tokens: null,
    retires_at: null,
  };
}

/** Anthropic's page size: 20 unless asked, at most 1000. */
function pageSize(limit: unknown): number {
  const n = typeof limit === 'string' ? Number.parseInt(limit, 10) : Number.NaN;
  return Number.isInteger(n) ? Math.min(Math.max(n, 1), 1000) : 20;
}

/**
 * `GET /v1/models` for Anthropic clients (the request carries
 * `anthropic-version`): the ids of the OpenAI list, paged as Anthropic pages
 * (`limit`, `after_id`, `before_id`; `has_more`, `first_id`, `last_id`).
 */
export function listAnthropicModels(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes'>,
  query: Record<string, unknown>,
): AnthropicModelList {
  const ids = listModelIds(rt);
  const limit = pageSize(query.limit);
  let start = 0;
  let end = ids.length;
  if (typeof query.after_id === 'string') start = ids.indexOf(query.after_id) + 1;
  else if (typeof query.before_id === 'string') {
    end = Math.max(ids.indexOf(query.before_id), 0);
    start = Math.max(end - limit, 0);
  }
  const page = ids.slice(start, Math.min(start + limit, end));
  const hasMore = typeof query.before_id === 'string' ? start > 0 : start + page.length < end;
  return {
    data: page.map(toAnthropicModel),
    has_more: hasMore,
    first_id: page[0] ?? null,
    last_id: page.at(-1) ?? null,
  };
}
