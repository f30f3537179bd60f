import {
  MAX_USAGE_EVENTS_PER_BATCH,
  ZBillableQuery,
  ZMeterErrorReportsQuery,
  ZUsageEventsBatch,
  ZUserParams,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import express, { Router } from 'express';
import type { PaymentEnv } from '../env';
import { type BillableDeps, checkBillable } from './billable';
import type { ErrorReportDeps } from './error-reports';
import { handleThinEvent, listMeterErrorReports } from './error-reports';
import { type RecordUsageDeps, recordUsageEvents } from './record-usage';
import { listRefusals } from './refusals-repo';

/** A full batch of 1,000 events with long user ids stays well under this. */
const USAGE_BODY_LIMIT = `${Math.ceil((MAX_USAGE_EVENTS_PER_BATCH * 600) / 1024)}kb`;

/**
 * `POST /usage-events`, `GET /usage-events/refused` and `GET /usage-events/error-reports` under /api/v1.
 * Mounted before the API's general body parser: a batch needs a larger limit.
 */
export function createUsageRouter(deps: RecordUsageDeps & BillableDeps): Router {
  const router = Router();
  router.post('/usage-events', jsonBody(USAGE_BODY_LIMIT), async (req, res) => {
    const body = parseRequestPart(ZUsageEventsBatch, req.body);
    res.json(await recordUsageEvents(deps, body));
  });
  router.get('/usage-events/billable/:user_id', async (req, res) => {
    const { user_id } = parseRequestPart(ZUserParams, req.params);
    const { meter } = parseRequestPart(ZBillableQuery, req.query);
    res.json(await checkBillable(deps, user_id, meter));
  });
  router.get('/usage-events/refused', async (req, res) => {
    const { limit } = parseRequestPart(ZMeterErrorReportsQuery, req.query);
    res.json({ refusals: await listRefusals(deps.prisma, limit) });
  });
  router.get('/usage-events/error-reports', async (req, res) => {
    const { limit } = parseRequestPart(ZMeterErrorReportsQuery, req.query);
    res.json({ reports: await listMeterErrorReports(deps.prisma, limit) });
  });
  return router;
}

/**
 * `POST /webhooks/stripe/events`: Stripe's event destination for thin ("v2")
 * events, read raw for the signature like /webhooks/stripe. Without
 * STRIPE_EVENT_DESTINATION_SECRET it answers 503 (Stripe retries).
 */
export function createThinEventRouter(
  deps: ErrorReportDeps & {
    stripe: Parameters<typeof handleThinEvent>[0]['stripe'];
    env: Pick<PaymentEnv, 'STRIPE_EVENT_DESTINATION_SECRET'>;
  },
): Router {
  const router = Router();
  router.post(
    '/webhooks/stripe/events',
    express.raw({ type: () => true, limit: '512kb' }),
    async (req, res) => {
      const secret = deps.env.STRIPE_EVENT_DESTINATION_SECRET;
      if (!secret)
        throw new AppError('service_unavailable', { message: 'stripe event destination is not configured' });
      const signature = req.headers['stripe-signature'];
      if (typeof signature !== 'string' || !Buffer.isBuffer(req.body))
        throw new AppError('webhook_signature_invalid');
      const outcome = await handleThinEvent(deps, req.body, signature, secret);
      deps.logger.info({ outcome }, 'stripe thin event');
      res.json({ received: true });
    },
  );
  return router;
}
