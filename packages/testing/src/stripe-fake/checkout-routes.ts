import { sessionParams } from './checkout-params';
import { invalidRequest, resourceMissing } from './errors';
import { applyExpand } from './expand';
import type { FakeCheckoutSession, FakeLineItem, FakePrice } from './objects';
import { p } from './params';
import type { Route } from './route';
import { cleanMetadata, makeId, type StripeStore } from './store';

/** `hosted_page` is today's name; `hosted` is accepted from older API versions. */
const HOSTED = new Set(['hosted_page', 'hosted']);

type LineItemParam = {
  price?: string | null;
  quantity?: number;
  price_data?: unknown;
  adjustable_quantity?: unknown;
};

function checkUrl(value: unknown, param: string): void {
  if (typeof value !== 'string') return;
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return;
  } catch {}
  throw invalidRequest('Not a valid URL', param, 'url_invalid');
}

function exclusive(params: Record<string, unknown>, a: string, b: string): void {
  if (params[a] != null && params[b] != null) {
    throw invalidRequest(`You may only specify one of these parameters: ${a}, ${b}.`, a);
  }
}

/** Applies Stripe's cross-field rules for `line_items` and returns what was bought. */
function resolveLineItems(
  store: StripeStore,
  mode: string,
  raw: unknown,
): { items: FakeLineItem[]; prices: FakePrice[] } {
  const list = (raw ?? []) as LineItemParam[];
  if (mode === 'setup') {
    if (list.length > 0) throw invalidRequest('You cannot pass `line_items` in `setup` mode.', 'line_items');
    return { items: [], prices: [] };
  }
  if (list.length === 0)
    throw invalidRequest('Missing required param: line_items.', 'line_items', 'parameter_missing');
  const items: FakeLineItem[] = [];
  const prices: FakePrice[] = [];
  list.forEach((item, i) => {
    const at = `line_items[${i}]`;
    if (item.price_data != null)
      throw invalidRequest('The Stripe fake supports `price` only, not `price_data`.', at);
    if (item.price == null)
      throw invalidRequest(`You must specify either \`price\` or \`price_data\` in ${at}.`, at);
    const price = store.prices.get(item.price);
    if (!price) throw resourceMissing('price', item.price, `${at}[price]`, 400);
    if (!price.active) {
      throw invalidRequest(
        'The price specified is inactive. This field only accepts active prices.',
        `${at}[price]`,
      );
    }
    if (item.quantity !== undefined && price.recurring?.usage_type === 'metered') {
      throw invalidRequest(
        `Quantity should not be specified where usage_type is \`metered\`. Remove quantity from \`${at}\``,
        `${at}[quantity]`,
      );
    }
    if (item.quantity === undefined && price.recurring?.usage_type !== 'metered') {
      throw invalidRequest(`Quantity is required. Add \`quantity\` to \`${at}\``, `${at}[quantity]`);
    }
    if (item.quantity === 0)
      throw invalidRequest('This value must be greater than or equal to 1.', `${at}[quantity]`);
    if (mode === 'payment' && price.type === 'recurring') {
      throw invalidRequest(
        'You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.',
        `${at}[price]`,
      );
    }
    if (prices[0] && prices[0].currency !== price.currency) {
      throw invalidRequest('Line items must all use the same currency.', `${at}[price]`);
    }
    items.push({ price: price.id, quantity: item.quantity ?? 1 });
    prices.push(price);
  });
  const recurring = prices.filter((price) => price.type === 'recurring').length;
  if (mode === 'payment' && items.length > 100) {
    throw invalidRequest('You may only specify up to 100 line items in `payment` mode.', 'line_items');
  }
  if (mode === 'subscription') {
    if (recurring === 0) {
      throw invalidRequest(
        'You must provide at least one recurring price in `subscription` mode when using prices.',
        'line_items',
      );
    }
    if (recurring > 20 || items.length - recurring > 20) {
      throw invalidRequest(
        'You may only specify up to 20 recurring and 20 one-time line items in `subscription` mode.',
        'line_items',
      );
    }
  }
  return { items, prices };
}

function checkModeSpecific(params: Record<string, unknown>, mode: string): void {
  if (params.subscription_data != null && mode !== 'subscription') {
    throw invalidRequest(`You can not pass \`subscription_data\` in \`${mode}\` mode.`, 'subscription_data');
  }
  if (params.payment_intent_data != null && mode !== 'payment') {
    throw invalidRequest(
      `You can not pass \`payment_intent_data\` in \`${mode}\` mode.`,
      'payment_intent_data',
    );
  }
  if (params.customer_creation != null && mode === 'subscription') {
    throw invalidRequest(
      '`customer_creation` can only be used in `payment` and `setup` mode.',
      'customer_creation',
    );
  }
}

function checkUiMode(params: Record<string, unknown>, uiMode: string): void {
  if (HOSTED.has(uiMode)) {
    if (params.success_url == null) {
      throw invalidRequest('Missing required param: success_url.', 'success_url', 'parameter_missing');
    }
    if (params.return_url != null) {
      throw invalidRequest(
        `You can not pass \`return_url\` when \`ui_mode\` is \`${uiMode}\`.`,
        'return_url',
      );
    }
    return;
  }
  for (const field of ['success_url', 'cancel_url']) {
    if (params[field] != null) {
      throw invalidRequest(`You cannot use \`${field}\` with \`ui_mode=${uiMode}\`.`, field);
    }
  }
  if (params.return_url == null && params.redirect_on_completion !== 'never') {
    throw invalidRequest('Missing required param: return_url.', 'return_url', 'parameter_missing');
  }
}

export const checkoutRoutes: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/checkout\/sessions$/,
    params: sessionParams,
    handle({ store, params }) {
      const mode = params.mode as FakeCheckoutSession['mode'];
      const uiMode = (params.ui_mode as string | undefined) ?? 'hosted_page';
      checkUiMode(params, uiMode);
      for (const field of ['success_url', 'cancel_url', 'return_url']) checkUrl(params[field], field);
      exclusive(params, 'customer', 'customer_email');
      exclusive(params, 'allow_promotion_codes', 'discounts');
      checkModeSpecific(params, mode);
      const customer = params.customer as string | undefined;
      if (customer !== undefined && !store.customers.has(customer)) {
        throw resourceMissing('customer', customer, 'customer', 400);
      }
      const reference = params.client_reference_id as string | undefined;
      if (reference !== undefined && reference.length > 200) {
        throw invalidRequest(
          'Invalid client_reference_id: must be at most 200 characters',
          'client_reference_id',
        );
      }
      const created = store.now();
      const expiresAt = (params.expires_at as number | undefined) ?? created + 86_400;
      if (expiresAt < created + 1800 || expiresAt > created + 86_400) {
        throw invalidRequest(
          'The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.',
          'expires_at',
        );
      }
      const { items, prices } = resolveLineItems(store, mode, params.line_items);
      const total = items.reduce((sum, item, i) => sum + item.quantity * (prices[i]?.unit_amount ?? 0), 0);
      const id = makeId('cs_test', 58);
      const hosted = HOSTED.has(uiMode);
      const session: FakeCheckoutSession = {
        id,
        object: 'checkout.session',
        allow_promotion_codes: (params.allow_promotion_codes as boolean | undefined) ?? null,
        amount_subtotal: mode === 'setup' ? null : total,
        amount_total: mode === 'setup' ? null : total,
        cancel_url: (params.cancel_url as string | undefined) ?? null,
        client_reference_id: reference ?? null,
        client_secret: hosted ? null : `${id}_secret_${makeId('x', 24).slice(2)}`,
        created,
        currency: prices[0]?.currency ?? (params.currency as string | undefined) ?? null,
        customer: customer ?? null,
        customer_email: (params.customer_email as string | undefined) ?? null,
        expires_at: expiresAt,
        livemode: false,
        locale: (params.locale as string | undefined) ?? null,
        metadata: cleanMetadata(params.metadata),
        mode,
        payment_intent: null,
        payment_status: mode === 'setup' ? 'no_payment_required' : 'unpaid',
        return_url: (params.return_url as string | undefined) ?? null,
        status: 'open',
        subscription: null,
        success_url: (params.success_url as string | undefined) ?? null,
        ui_mode: uiMode,
        url: hosted ? `https://checkout.stripe.test/c/pay/${id}` : null,
      };
      store.checkoutSessions.set(id, session);
      store.checkoutLineItems.set(id, items);
      store.checkoutParams.set(id, params);
      store.counters.checkoutSessions++;
      return applyExpand(store, session, params.expand);
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/checkout\/sessions\/([^/]+)$/,
    params: { expand: p.expand() },
    handle({ store, params, pathParams: [id = ''] }) {
      const session = store.checkoutSessions.get(id);
      if (!session) throw resourceMissing('checkout.session', id, 'session');
      return applyExpand(store, session, params.expand);
    },
  },
];
