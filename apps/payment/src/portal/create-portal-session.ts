import type { CreatePortalSessionRequest, PortalSessionResponse } from '@platform/contract';
import { AppError } from '@platform/errors';
import { assertRedirectsAllowed } from '../checkout/redirects';
import { findCustomerByUserId, markCustomerDeleted } from '../customers/repo';
import type { PaymentDeps } from '../deps';
import { scopeIdempotencyKey } from '../idempotency';
import { isCustomerMissing, mapStripeError } from '../stripe-errors';

export type PortalDeps = Pick<PaymentDeps, 'env' | 'kv' | 'prisma' | 'stripe' | 'now'>;

/**
 * Opens the Stripe customer portal for a user. A user who never checked out has
 * no customer, hence no portal: 404 `customer not found` (a customer is not
 * created here, since there would be nothing to manage). A customer Stripe
 * deleted is the same: its mapping is forgotten (the next checkout makes a new one).
 */
export async function createPortalSession(
  deps: PortalDeps,
  body: CreatePortalSessionRequest,
  clientKey?: string,
): Promise<PortalSessionResponse> {
  assertRedirectsAllowed({ return_url: body.return_url }, deps.env.PAYMENT_ALLOWED_REDIRECT_HOSTS);
  const customer = await findCustomerByUserId(deps.prisma, body.user_id);
  if (!customer || customer.deletedAt) throw new AppError('customer_not_found');
  const idempotency = await scopeIdempotencyKey(deps.kv, {
    operation: 'portal',
    userId: body.user_id,
    clientKey,
    body,
  });
  const configuration = deps.env.PAYMENT_PORTAL_CONFIGURATION;
  let session: { url: string };
  try {
    session = await deps.stripe.billingPortal.sessions.create(
      {
        customer: customer.stripeCustomerId,
        return_url: body.return_url,
        ...(configuration ? { configuration } : {}),
      },
      idempotency.stripeKey ? { idempotencyKey: idempotency.stripeKey } : undefined,
    );
  } catch (err) {
    if (!isCustomerMissing(err)) throw mapStripeError(err);
    await markCustomerDeleted(deps.prisma, customer.stripeCustomerId, deps.now());
    throw new AppError('customer_not_found', { cause: err });
  }
  await idempotency.remember();
  return { portal_url: session.url };
}
