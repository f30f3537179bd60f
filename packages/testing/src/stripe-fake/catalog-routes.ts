import type Stripe from 'stripe';
import { prefixData } from './customer-routes';
import { invalidRequest, resourceMissing } from './errors';
import { applyExpand } from './expand';
import type { RecurringInterval } from './objects';
import { anyOf, p } from './params';
import { listParams, paginate, type Route } from './route';
import { addPrice, addProduct, cleanMetadata } from './store';

const INTERVALS = ['day', 'month', 'week', 'year'] as const;

export const catalogRoutes: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/products$/,
    params: {
      name: p.string({ required: true }),
      id: p.string(),
      active: p.boolean(),
      description: p.string(),
      metadata: p.metadata(),
      expand: p.expand(),
      ...anyOf(
        'default_price_data',
        'images',
        'marketing_features',
        'package_dimensions',
        'shippable',
        'statement_descriptor',
        'tax_code',
        'tax_details',
        'type',
        'unit_label',
        'url',
      ),
    },
    handle({ store, params }) {
      const product = addProduct(store, {
        name: params.name as string,
        description: (params.description as string | undefined) ?? null,
        metadata: cleanMetadata(params.metadata),
        ...(typeof params.id === 'string' ? { id: params.id } : {}),
      });
      if (params.active === false) product.active = false;
      store.counters.products++;
      return applyExpand(store, product, params.expand);
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/products\/([^/]+)$/,
    params: { expand: p.expand() },
    handle({ store, params, pathParams: [id = ''] }) {
      const product = store.products.get(id);
      if (!product) throw resourceMissing('product', id, 'id');
      return applyExpand(store, product, params.expand);
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/prices$/,
    params: {
      currency: p.string({ required: true }),
      product: p.string(),
      unit_amount: p.integer({ min: 0 }),
      unit_amount_decimal: p.string(),
      recurring: p.object({
        interval: p.oneOf(INTERVALS, { required: true }),
        interval_count: p.integer({ min: 1 }),
        usage_type: p.oneOf(['licensed', 'metered']),
        meter: p.string(),
        trial_period_days: p.integer({ min: 0 }),
      }),
      active: p.boolean(),
      lookup_key: p.string(),
      nickname: p.string(),
      metadata: p.metadata(),
      tax_behavior: p.oneOf(['exclusive', 'inclusive', 'unspecified']),
      product_data: p.object({ name: p.string({ required: true }), ...anyOf('active', 'metadata', 'id') }),
      expand: p.expand(),
      ...anyOf(
        'billing_scheme',
        'currency_options',
        'custom_unit_amount',
        'tiers',
        'tiers_mode',
        'transfer_lookup_key',
        'transform_quantity',
      ),
    },
    handle({ store, params }) {
      let product = params.product as string | undefined;
      const productData = params.product_data as { name: string } | undefined;
      if (product && productData) {
        throw invalidRequest(
          'You may only specify one of these parameters: product, product_data.',
          'product',
        );
      }
      if (!product && !productData) {
        throw invalidRequest('Missing required param: product.', 'product', 'parameter_missing');
      }
      if (product && !store.products.has(product)) throw resourceMissing('product', product, 'product', 400);
      if (productData) product = addProduct(store, { name: productData.name }).id;
      const amount = params.unit_amount ?? params.unit_amount_decimal;
      if (amount === undefined && params.custom_unit_amount === undefined) {
        throw invalidRequest('Missing required param: unit_amount.', 'unit_amount', 'parameter_missing');
      }
      const recurring = params.recurring as
        | {
            interval: RecurringInterval;
            interval_count?: number;
            usage_type?: 'licensed' | 'metered';
            meter?: string;
          }
        | undefined;
      const price = addPrice(store, {
        product: product as string,
        currency: params.currency as string,
        unit_amount: Number(amount ?? 0),
        recurring: recurring ?? null,
        lookup_key: (params.lookup_key as string | undefined) ?? null,
        nickname: (params.nickname as string | undefined) ?? null,
        metadata: cleanMetadata(params.metadata),
        active: params.active !== false,
      });
      store.counters.prices++;
      return applyExpand(store, price, params.expand);
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/prices$/,
    params: {
      ...listParams,
      active: p.boolean(),
      currency: p.string(),
      product: p.string(),
      type: p.oneOf(['one_time', 'recurring']),
      expand: p.expand(),
      created: p.any(),
      lookup_keys: p.any(),
      recurring: p.any(),
    } satisfies Record<keyof Stripe.PriceListParams, unknown>,
    handle({ store, params }) {
      const prices = [...store.prices.values()].filter(
        (price) =>
          (params.active === undefined || price.active === params.active) &&
          (params.currency === undefined || price.currency === params.currency) &&
          (params.product === undefined || price.product === params.product) &&
          (params.type === undefined || price.type === params.type),
      );
      return applyExpand(store, paginate(prices, params, '/v1/prices', 'price'), prefixData(params.expand));
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/prices\/([^/]+)$/,
    params: { expand: p.expand() },
    handle({ store, params, pathParams: [id = ''] }) {
      const price = store.prices.get(id);
      if (!price) throw resourceMissing('price', id, 'id');
      return applyExpand(store, price, params.expand);
    },
  },
];
