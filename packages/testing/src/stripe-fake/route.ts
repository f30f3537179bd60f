import { resourceMissing } from './errors';
import type { StripeList } from './objects';
import type { ParamFields } from './params';
import type { StripeStore } from './store';

export type RouteContext = {
  store: StripeStore;
  /** Validated and coerced params (body for POST, query for GET). */
  params: Record<string, unknown>;
  /** Capture groups of the path pattern, e.g. the object id. */
  pathParams: string[];
  options: RouteOptions;
};

/** Fake-wide settings the routes read. */
export type RouteOptions = {
  /** When false, portal sessions fail as in a test account without saved portal settings. */
  portalConfigured: boolean;
  /** Milliseconds before a new or updated customer shows up in search, like Stripe's search index lag. */
  searchIndexDelayMs: number;
  /** When each customer became searchable (ms since epoch). */
  searchVisibleAt: Map<string, number>;
};

export type Route = {
  method: 'GET' | 'POST' | 'DELETE';
  pattern: RegExp;
  params: ParamFields;
  handle(ctx: RouteContext): unknown;
};

export const listParams = {
  limit: { kind: 'integer', min: 1, max: 100 },
  starting_after: { kind: 'string' },
  ending_before: { kind: 'string' },
} as const satisfies ParamFields;

/**
 * Cursor pagination as Stripe does it: newest first, `starting_after` /
 * `ending_before` by object id, `has_more` when more remain.
 */
export function paginate<T extends { id: string; created: number }>(
  items: Iterable<T>,
  params: Record<string, unknown>,
  url: string,
  resource: string,
): StripeList<T> {
  // Reverse insertion order first so objects created in the same second still list newest first.
  const sorted = [...items].reverse().sort((a, b) => b.created - a.created);
  const limit = typeof params.limit === 'number' ? params.limit : 10;
  let start = 0;
  let end = sorted.length;
  if (typeof params.starting_after === 'string') {
    const index = sorted.findIndex((item) => item.id === params.starting_after);
    if (index < 0) throw resourceMissing(resource, params.starting_after, 'starting_after', 400);
    start = index + 1;
  } else if (typeof params.ending_before === 'string') {
    const index = sorted.findIndex((item) => item.id === params.ending_before);
    if (index < 0) throw resourceMissing(resource, params.ending_before, 'ending_before', 400);
    end = index;
    start = Math.max(0, end - limit);
    return { object: 'list', data: sorted.slice(start, end), has_more: start > 0, url };
  }
  const data = sorted.slice(start, start + limit);
  return { object: 'list', data, has_more: start + limit < end, url };
}
