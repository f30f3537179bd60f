/**
 * `@platform/payment/testing`: the payment service's public test harness.
 * Other workspaces (bench, the client's tests, e2e) build and drive a real
 * payment app through this file only, never through the app's src/ or
 * generated paths.
 */
export { createApp, SERVICE_NAME } from '../../src/app';
export type { PaymentDeps } from '../../src/deps';
export { loadPaymentEnv, type PaymentEnv, ZPaymentEnv } from '../../src/env';
export { PrismaClient } from '../../src/generated/prisma/client';
export { createStripeClient } from '../../src/stripe-client';
export * from './harness';
