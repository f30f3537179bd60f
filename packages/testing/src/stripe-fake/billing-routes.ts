import { prefixData } from './customer-routes';
import { invalidRequest, resourceMissing } from './errors';
import { applyExpand } from './expand';
import { type FakePortalSession, type FakeSubscription, SUBSCRIPTION_STATUSES } from './objects';
import { anyOf, p } from './params';
import { listParams, paginate, type Route } from './route';
import { makeId } from './store';

export const billingRoutes: Route[] = [
  {
    method: 'GET',
    pattern: /^\/v1\/subscriptions\/([^/]+)$/,
    params: { expand: p.expand() },
    handle({ store, params, pathParams: [id = ''] }) {
      const subscription = store.subscriptions.get(id);
      if (!subscription) throw resourceMissing('subscription', id, 'id');
      return applyExpand(store, subscription, params.expand);
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/subscriptions$/,
    params: {
      ...listParams,
      customer: p.string(),
      price: p.string(),
      status: p.oneOf(['all', 'ended', ...SUBSCRIPTION_STATUSES]),
      expand: p.expand(),
      ...anyOf(
        'automatic_tax',
        'collection_method',
        'created',
        'current_period_end',
        'current_period_start',
        'customer_account',
        'plan',
        'test_clock',
      ),
    },
    handle({ store, params }) {
      const customer = params.customer as string | undefined;
      if (customer !== undefined && !store.customers.has(customer) && !store.deletedCustomers.has(customer)) {
        throw resourceMissing('customer', customer, 'customer', 400);
      }
      const price = params.price as string | undefined;
      const status = (params.status as string | undefined) ?? 'default';
      const subscriptions = [...store.subscriptions.values()].filter(
        (sub) =>
          (customer === undefined || sub.customer === customer) &&
          (price === undefined || sub.items.data.some((item) => item.price.id === price)) &&
          matchesStatus(sub, status),
      );
      const page = paginate(subscriptions, params, '/v1/subscriptions', 'subscription');
      return applyExpand(store, page, prefixData(params.expand));
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/billing_portal\/sessions$/,
    params: {
      customer: p.string({ required: true }),
      return_url: p.string(),
      configuration: p.string(),
      locale: p.string(),
      on_behalf_of: p.string(),
      expand: p.expand(),
      ...anyOf('customer_account', 'flow_data'),
    },
    handle({ store, params, options }) {
      const customer = params.customer as string;
      if (!store.customers.has(customer)) throw resourceMissing('customer', customer, 'customer', 400);
      const configuration = params.configuration as string | undefined;
      if (configuration !== undefined && !configuration.startsWith('bpc_')) {
        throw resourceMissing('billing_portal.configuration', configuration, 'configuration', 400);
      }
      if (configuration === undefined && !options.portalConfigured) {
        throw invalidRequest(
          "You can't create a portal session in test mode until you save your customer portal settings in test mode at https://dashboard.stripe.com/test/settings/billing/portal.",
        );
      }
      const returnUrl = params.return_url as string | undefined;
      if (returnUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(returnUrl)) {
        throw invalidRequest('Not a valid URL', 'return_url', 'url_invalid');
      }
      const id = makeId('bps', 24);
      const session: FakePortalSession = {
        id,
        object: 'billing_portal.session',
        configuration: configuration ?? 'bpc_default',
        created: store.now(),
        customer,
        flow: null,
        livemode: false,
        locale: (params.locale as string | undefined) ?? null,
        on_behalf_of: (params.on_behalf_of as string | undefined) ?? null,
        return_url: returnUrl ?? null,
        url: `https://billing.stripe.test/p/session/test_${makeId('x', 32).slice(2)}`,
      };
      store.portalSessions.set(id, session);
      store.counters.portalSessions++;
      return applyExpand(store, session, params.expand);
    },
  },
];

function matchesStatus(sub: FakeSubscription, status: string): boolean {
  if (status === 'all') return true;
  // Stripe lists every subscription that is not canceled unless a status is asked for.
  if (status === 'default') return sub.status !== 'canceled';
  if (status === 'ended') return sub.status === 'canceled' || sub.status === 'incomplete_expired';
  return sub.status === status;
}
