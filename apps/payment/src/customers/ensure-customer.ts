import { createHash } from 'node:crypto';
import type { Logger } from '@platform/logging';
import type Stripe from 'stripe';
import type { PrismaClient } from '../generated/prisma/client';
import { callStripe, isStripeError, mapStripeError } from '../stripe-errors';
import {
  type CustomerRecord,
  findCustomerByUserId,
  insertCustomerIfAbsent,
  updateCustomerEmail,
} from './repo';

export type CustomerDeps = { prisma: PrismaClient; stripe: Stripe; logger: Logger };

/**
 * Idempotency key of the customer creation for one user. Stripe answers every
 * request with the same key (within 24 h) with the first request's customer, so
 * concurrent first checkouts of one user create one customer. Hashed so the
 * user id does not show up in Stripe's request logs.
 */
export function customerCreateKey(userId: string): string {
  return `customer-create:${createHash('sha256').update(userId, 'utf8').digest('hex')}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stripe search query for a metadata value; quotes and backslashes are escaped as Stripe's syntax wants. */
function metadataQuery(userId: string): string {
  return `metadata['user_id']:'${userId.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The same key with different parameters (another e-mail) within 24 h is refused
 * by Stripe. That happens when two first checkouts with different addresses race,
 * or when a creation's database write failed earlier: find the customer the
 * first request created, in our table (the racing request is about to insert it)
 * and then through Stripe's search.
 */
async function findCreatedCustomer(deps: CustomerDeps, userId: string): Promise<StripeSide | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await findCustomerByUserId(deps.prisma, userId);
    if (row) return { id: row.stripeCustomerId, email: row.email };
    await sleep(100 * (attempt + 1));
  }
  const found = await callStripe(() =>
    deps.stripe.customers.search({ query: metadataQuery(userId), limit: 1 }),
  );
  const customer = found.data[0];
  return customer ? { id: customer.id, email: customer.email } : undefined;
}

/** The customer as Stripe has it: its e-mail may differ from the request's when it was found, not created. */
type StripeSide = { id: string; email: string | null };

async function createStripeCustomer(deps: CustomerDeps, userId: string, email: string): Promise<StripeSide> {
  try {
    const customer = await deps.stripe.customers.create(
      { email, metadata: { user_id: userId } },
      { idempotencyKey: customerCreateKey(userId) },
    );
    return { id: customer.id, email: customer.email };
  } catch (err) {
    if (!isStripeError(err) || err.type !== 'StripeIdempotencyError') throw mapStripeError(err);
    const existing = await findCreatedCustomer(deps, userId);
    if (existing) return existing;
    throw mapStripeError(err);
  }
}

async function syncEmail(deps: CustomerDeps, customer: CustomerRecord, email: string): Promise<void> {
  if (customer.email === email) return;
  await callStripe(() => deps.stripe.customers.update(customer.stripeCustomerId, { email }));
  await updateCustomerEmail(deps.prisma, customer.userId, email);
}

/**
 * Returns the Stripe customer of a user, creating it at the first checkout with
 * `metadata.user_id`, and bringing its e-mail up to date when the caller sends a
 * new one. The user_id -> customer mapping is unique in the database; when two
 * requests race, the row that was inserted first wins and both return it.
 */
export async function ensureCustomer(
  deps: CustomerDeps,
  input: { userId: string; email: string },
): Promise<string> {
  const existing = await findCustomerByUserId(deps.prisma, input.userId);
  if (existing) {
    await syncEmail(deps, existing, input.email);
    return existing.stripeCustomerId;
  }
  const created = await createStripeCustomer(deps, input.userId, input.email);
  // The row records Stripe's e-mail, so syncEmail below corrects a found customer's old address.
  await insertCustomerIfAbsent(deps.prisma, {
    userId: input.userId,
    stripeCustomerId: created.id,
    email: created.email ?? '',
  });
  const winner = await findCustomerByUserId(deps.prisma, input.userId);
  if (!winner) throw new Error('customer row missing right after insert');
  if (winner.stripeCustomerId !== created.id) {
    // Not expected (every creation for a user uses the same idempotency key); logged so
    // the extra customer can be found and deleted in the Stripe dashboard.
    deps.logger.warn(
      { stripeCustomerId: created.id, kept: winner.stripeCustomerId },
      'a second Stripe customer was created for a user; the mapped one is kept',
    );
  }
  await syncEmail(deps, winner, input.email);
  return winner.stripeCustomerId;
}
