import { compileCustomerQuery } from './customer-search';
import { invalidRequest, resourceMissing } from './errors';
import { applyExpand } from './expand';
import type { FakeCustomer } from './objects';
import { anyOf, type ParamFields, p } from './params';
import { listParams, paginate, type Route, type RouteContext } from './route';
import { addCustomer, cleanMetadata, mergeMetadata } from './store';

const writable = {
  email: p.email(),
  name: p.string(),
  description: p.string(),
  phone: p.string(),
  metadata: p.metadata(),
  expand: p.expand(),
  preferred_locales: p.array(p.string()),
  ...anyOf(
    'address',
    'balance',
    'business_name',
    'cash_balance',
    'individual_name',
    'invoice_prefix',
    'invoice_settings',
    'next_invoice_sequence',
    'shipping',
    'source',
    'tax',
    'tax_exempt',
    'validate',
  ),
} satisfies ParamFields;

function markSearchable({ options }: RouteContext, id: string): void {
  options.searchVisibleAt.set(id, Date.now() + options.searchIndexDelayMs);
}

function getCustomer({ store }: RouteContext, id: string): FakeCustomer {
  const customer = store.customers.get(id);
  if (!customer) throw resourceMissing('customer', id, 'id');
  return customer;
}

export const customerRoutes: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/customers$/,
    params: { ...writable, ...anyOf('payment_method', 'tax_id_data', 'test_clock') },
    handle(ctx) {
      const { store, params } = ctx;
      const customer = addCustomer(store, {
        email: (params.email as string | null | undefined) ?? null,
        name: (params.name as string | null | undefined) ?? null,
        description: (params.description as string | null | undefined) ?? null,
        phone: (params.phone as string | null | undefined) ?? null,
        metadata: cleanMetadata(params.metadata),
      });
      if (Array.isArray(params.preferred_locales)) customer.preferred_locales = params.preferred_locales;
      store.counters.customers++;
      markSearchable(ctx, customer.id);
      return applyExpand(store, customer, params.expand);
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/customers\/search$/,
    params: {
      query: p.string({ required: true }),
      limit: listParams.limit,
      page: p.string(),
      expand: p.expand(),
    },
    handle({ store, params, options }) {
      const matches = compileCustomerQuery(params.query as string);
      const now = Date.now();
      const hits = [...store.customers.values()]
        .reverse()
        .sort((a, b) => b.created - a.created)
        .filter((c) => (options.searchVisibleAt.get(c.id) ?? 0) <= now && matches(c));
      const limit = (params.limit as number | undefined) ?? 10;
      const offset = typeof params.page === 'string' ? decodePage(params.page) : 0;
      const data = hits.slice(offset, offset + limit);
      const hasMore = offset + limit < hits.length;
      const page = {
        object: 'search_result',
        data,
        has_more: hasMore,
        next_page: hasMore ? Buffer.from(String(offset + limit)).toString('base64url') : null,
        url: '/v1/customers/search',
      };
      return applyExpand(store, page, prefixData(params.expand));
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/customers\/([^/]+)$/,
    params: { expand: p.expand() },
    handle(ctx) {
      const id = ctx.pathParams[0] ?? '';
      if (ctx.store.deletedCustomers.has(id)) return { id, object: 'customer', deleted: true };
      return applyExpand(ctx.store, getCustomer(ctx, id), ctx.params.expand);
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/customers\/([^/]+)$/,
    params: { ...writable, default_source: p.string() },
    handle(ctx) {
      const { params } = ctx;
      const customer = getCustomer(ctx, ctx.pathParams[0] ?? '');
      for (const field of ['email', 'name', 'description', 'phone'] as const) {
        const value = params[field] as string | null | undefined;
        if (value !== undefined) customer[field] = value;
      }
      if (params.metadata !== undefined) {
        customer.metadata = mergeMetadata(
          customer.metadata,
          params.metadata as Record<string, string | null>,
        );
      }
      markSearchable(ctx, customer.id);
      return applyExpand(ctx.store, customer, params.expand);
    },
  },
  {
    method: 'DELETE',
    pattern: /^\/v1\/customers\/([^/]+)$/,
    params: {},
    handle(ctx) {
      const customer = getCustomer(ctx, ctx.pathParams[0] ?? '');
      ctx.store.customers.delete(customer.id);
      ctx.store.deletedCustomers.add(customer.id);
      return { id: customer.id, object: 'customer', deleted: true };
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/customers$/,
    params: { ...listParams, email: p.string(), expand: p.expand(), ...anyOf('created', 'test_clock') },
    handle({ store, params }) {
      const email = params.email as string | undefined;
      // Stripe's list filter on email is exact and case-sensitive, unlike search.
      const customers = [...store.customers.values()].filter((c) => email === undefined || c.email === email);
      const page = paginate(customers, params, '/v1/customers', 'customer');
      return applyExpand(store, page, prefixData(params.expand));
    },
  },
];

function decodePage(page: string): number {
  const offset = Number(Buffer.from(page, 'base64url').toString());
  if (!Number.isInteger(offset) || offset < 0) throw invalidRequest('Invalid page token.', 'page');
  return offset;
}

/** List and search endpoints take expand paths that start with `data.`. */
export function prefixData(expand: unknown): unknown {
  if (!Array.isArray(expand)) return expand;
  for (const path of expand) {
    if (typeof path === 'string' && !path.startsWith('data.')) {
      throw invalidRequest(`This property cannot be expanded (${path}).`, 'expand');
    }
  }
  return expand;
}
