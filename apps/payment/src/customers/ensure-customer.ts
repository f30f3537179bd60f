import { createHash } from 'node:crypto';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type Stripe from 'stripe';
import type { PrismaClient } from '../generated/prisma/client';
import { callStripe, isCustomerMissing, isStripeError, mapStripeError } from '../stripe-errors';
import {
  type CustomerRecord,
  findCustomerByUserId,
  insertCustomerIfAbsent,
  markCustomerDeleted,
  replaceDeletedCustomer,
  updateCustomerEmail,
} from './repo';

export type CustomerDeps = { prisma: PrismaClient; stripe: Stripe; logger: Logger; now: () => Date };

/**
 * Idempotency key of the customer creation for one user. Stripe answers every
 * request with the same key (within 24 h) with the first request's customer, so
 * concurrent first checkouts of one user create one customer. Hashed so the
 * user id does not show up in Stripe's request logs.
 */
export function customerCreateKey(userId: string, replacing?: string): string {
  // The replacement of a deleted customer needs its own key: the first key would answer with the deleted one.
  const input = replacing === undefined ? userId : `${userId}\u0000${replacing}`;
  return `customer-create:${createHash('sha256').update(input, 'utf8').digest('hex')}`;
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
    if (row && !row.deletedAt) return { id: row.stripeCustomerId, email: row.email };
    await sleep(100 * (attempt + 1));
  }
  const found = await callStripe(() =>
    deps.stripe.customers.search({ query: metadataQuery(userId), limit: 1 }),
  );
  const customer = found.data[0];
  return customer ? { id: customer.id, email: customer.email } : undefined;
}

/**
 * The customer as Stripe has it: its e-mail may differ from the request's when
 * it was found, not created; `found` customers may have history (subscriptions).
 */
type StripeSide = { id: string; email: string | null; found?: boolean };

async function createStripeCustomer(
  deps: CustomerDeps,
  userId: string,
  email: string | undefined,
  replacing: string | undefined,
): Promise<StripeSide> {
  try {
    const customer = await deps.stripe.customers.create(
      { ...(email === undefined ? {} : { email }), metadata: { user_id: userId } },
      { idempotencyKey: customerCreateKey(userId, replacing) },
    );
    return { id: customer.id, email: customer.email };
  } catch (err) {
    if (!isStripeError(err) || err.type !== 'StripeIdempotencyError') throw mapStripeError(err);
    const existing = await findCreatedCustomer(deps, userId);
    if (existing) return { ...existing, found: true };
    throw mapStripeError(err);
  }
}

/** Thrown when Stripe no longer knows the mapped customer; the caller forgets it and tries once more. */
export class CustomerGoneError extends Error {
  constructor(readonly stripeCustomerId: string) {
    super(`stripe customer ${stripeCustomerId} no longer exists`);
  }
}

async function syncEmail(
  deps: CustomerDeps,
  customer: CustomerRecord,
  email: string | undefined,
): Promise<void> {
  if (email === undefined || customer.email === email) return;
  try {
    await deps.stripe.customers.update(customer.stripeCustomerId, { email });
  } catch (err) {
    if (isCustomerMissing(err)) throw new CustomerGoneError(customer.stripeCustomerId);
    throw mapStripeError(err);
  }
  await updateCustomerEmail(deps.prisma, customer.userId, email);
}

/** The Stripe error behind an AppError that callStripe made from it. */
const causeOf = (err: unknown): unknown => (err instanceof AppError ? err.cause : undefined);

/**
 * Runs `use` with the user's customer; when Stripe answers "No such customer"
 * (deleted in the Dashboard, and the `customer.deleted` event not yet here),
 * the mapping is forgotten and `use` runs once more with a fresh customer.
 */
export async function withCustomer<T>(
  deps: CustomerDeps,
  input: { userId: string; email?: string },
  use: (stripeCustomerId: string, created: boolean) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let customerId: string | undefined;
    try {
      const { id, created } = await ensureCustomerRecord(deps, input);
      customerId = id;
      return await use(id, created);
    } catch (err) {
      const gone =
        err instanceof CustomerGoneError
          ? err.stripeCustomerId
          : customerId !== undefined && (isCustomerMissing(err) || isCustomerMissing(causeOf(err)))
            ? customerId
            : undefined;
      if (gone === undefined) throw mapStripeError(err);
      await markCustomerDeleted(deps.prisma, gone, deps.now());
      deps.logger.warn({ stripeCustomerId: gone }, 'stripe customer no longer exists; mapping forgotten');
      if (attempt >= 1) {
        throw err instanceof CustomerGoneError
          ? new AppError('stripe_unavailable', { cause: err })
          : mapStripeError(err);
      }
    }
  }
}

/**
 * Returns the Stripe customer of a user, creating it at the first checkout with
 * `metadata.user_id`, and bringing its e-mail up to date when the caller sends a
 * new one (usage billing passes none: the e-mail is left as it is). The user_id -> customer mapping is unique in the database; when two
 * requests race, the row that was inserted first wins and both return it.
 */
export async function ensureCustomer(
  deps: CustomerDeps,
  input: { userId: string; email?: string },
): Promise<string> {
  return (await ensureCustomerRecord(deps, input)).id;
}

/**
 * A mapping Stripe reported deleted is replaced the same way: a new customer
 * under an idempotency key of its own, and a conditional update of the row.
 */
async function ensureCustomerRecord(
  deps: CustomerDeps,
  input: { userId: string; email?: string },
): Promise<{ id: string; created: boolean }> {
  const existing = await findCustomerByUserId(deps.prisma, input.userId);
  if (existing && !existing.deletedAt) {
    await syncEmail(deps, existing, input.email);
    return { id: existing.stripeCustomerId, created: false };
  }
  const replacing = existing?.stripeCustomerId;
  const created = await createStripeCustomer(deps, input.userId, input.email, replacing);
  // The row records Stripe's e-mail, so syncEmail below corrects a found customer's old address.
  const row = { userId: input.userId, stripeCustomerId: created.id, email: created.email ?? '' };
  if (replacing === undefined) await insertCustomerIfAbsent(deps.prisma, row);
  else await replaceDeletedCustomer(deps.prisma, { ...row, oldStripeCustomerId: replacing });
  const winner = await findCustomerByUserId(deps.prisma, input.userId);
  if (!winner || winner.deletedAt) throw new Error('customer row missing right after insert');
  if (winner.stripeCustomerId !== created.id) {
    // Not expected (every creation for a user uses the same idempotency key); logged so
    // the extra customer can be found and deleted in the Stripe dashboard.
    deps.logger.warn(
      { stripeCustomerId: created.id, kept: winner.stripeCustomerId },
      'a second Stripe customer was created for a user; the mapped one is kept',
    );
  }
  await syncEmail(deps, winner, input.email);
  return { id: winner.stripeCustomerId, created: !created.found && winner.stripeCustomerId === created.id };
}
