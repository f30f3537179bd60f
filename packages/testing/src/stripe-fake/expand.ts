import { invalidRequest } from './errors';
import type { StripeStore } from './store';

/** Fields Stripe lets a caller expand from an id into the object. */
const EXPANDABLE = new Set(['customer', 'product', 'price', 'subscription', 'default_price']);

function lookup(store: StripeStore, id: string): unknown {
  if (id.startsWith('cus_')) return store.customers.get(id);
  if (id.startsWith('prod_')) return store.products.get(id);
  if (id.startsWith('price_')) return store.prices.get(id);
  if (id.startsWith('sub_')) return store.subscriptions.get(id);
  return undefined;
}

/**
 * Returns a copy of `body` with the `expand` paths resolved the way Stripe
 * does (`customer`, `items.data.price.product`, `data.customer` on lists).
 * Unknown paths fail like Stripe, so a typo in `expand` fails the test.
 */
export function applyExpand(store: StripeStore, body: unknown, paths: unknown): unknown {
  const copy = structuredClone(body);
  if (!Array.isArray(paths)) return copy;
  for (const path of paths) {
    if (typeof path !== 'string') continue;
    const segments = path.split('.');
    if (segments.filter((s) => s !== 'data').length > 4) {
      throw invalidRequest(
        `You cannot expand more than 4 levels of a property. Property: ${path}`,
        'expand',
        'expansion_too_deep',
      );
    }
    walk(store, copy, segments, path);
  }
  return copy;
}

function walk(store: StripeStore, node: unknown, segments: string[], path: string): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) walk(store, item, segments, path);
    return;
  }
  const [head, ...rest] = segments;
  if (head === undefined) return;
  const record = node as Record<string, unknown>;
  if (!(head in record)) throw cannotExpand(path);
  let value = record[head];
  if (typeof value === 'string') {
    if (!EXPANDABLE.has(head)) throw cannotExpand(path);
    const found = lookup(store, value);
    if (found !== undefined) {
      value = structuredClone(found);
      record[head] = value;
    }
  } else if (rest.length === 0 && value !== null && typeof value === 'object' && !EXPANDABLE.has(head)) {
    throw cannotExpand(path);
  }
  if (rest.length > 0) walk(store, value, rest, path);
}

function cannotExpand(path: string): Error {
  return invalidRequest(`This property cannot be expanded (${path}).`, 'expand');
}
