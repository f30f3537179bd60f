import type { MeterErrorReport } from '@platform/contract';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type Stripe from 'stripe';
import type { PrismaClient } from '../generated/prisma/client';
import { isResourceMissing, mapStripeError } from '../stripe-errors';
import type { UsageMetrics } from './metrics';
import { findMeterErrorReports, insertMeterErrorReport } from './repo';

/** The thin event type Stripe sends when meter events it accepted fail validation later. */
export const METER_ERROR_REPORT_EVENT = 'v1.billing.meter.error_report_triggered';

type ErrorReportData = {
  developer_message_summary?: string;
  reason?: { error_count?: number; error_types?: Array<{ code: string; error_count: number }> };
  validation_start?: string;
  validation_end?: string;
};

export type ErrorReportDeps = { prisma: PrismaClient; logger: Logger; metrics: UsageMetrics };

const toDate = (value: string | undefined) => (value ? new Date(value) : null);

/**
 * Records one `v1.billing.meter.error_report_triggered` event (fetched in full:
 * thin notifications carry no data), idempotent by Stripe's event id, and logs
 * it at warn. Returns false for a redelivery.
 */
export async function recordMeterErrorReport(
  deps: ErrorReportDeps,
  event: { id: string; created: string; related_object?: { id?: string } | null; data: unknown },
): Promise<boolean> {
  const data = (event.data ?? {}) as ErrorReportData;
  const report = {
    id: event.id,
    meterId: event.related_object?.id ?? null,
    summary: data.developer_message_summary ?? '',
    errorCount: data.reason?.error_count ?? 0,
    errorTypes: (data.reason?.error_types ?? []) as object[],
    validationStart: toDate(data.validation_start),
    validationEnd: toDate(data.validation_end),
    stripeCreatedAt: new Date(event.created),
  };
  if (!(await insertMeterErrorReport(deps.prisma, report))) return false;
  deps.metrics.errorReport();
  deps.logger.warn(
    {
      stripeEventId: report.id,
      meterId: report.meterId,
      errorCount: report.errorCount,
      codes: (data.reason?.error_types ?? []).map((t) => t.code),
      summary: report.summary,
    },
    'stripe meter error report: meter events were rejected after they were accepted',
  );
  return true;
}

export async function listMeterErrorReports(
  prisma: PrismaClient,
  limit: number,
): Promise<MeterErrorReport[]> {
  const rows = await findMeterErrorReports(prisma, limit);
  return rows.map((row) => ({
    id: row.id,
    meter_id: row.meterId,
    summary: row.summary,
    error_count: row.errorCount,
    error_types: row.errorTypes as MeterErrorReport['error_types'],
    validation_start: row.validationStart?.toISOString() ?? null,
    validation_end: row.validationEnd?.toISOString() ?? null,
    received_at: row.receivedAt.toISOString(),
  }));
}

/** Parses, verifies and dispatches one thin-event delivery; the fetch goes through `stripe`. */
export async function handleThinEvent(
  deps: ErrorReportDeps & { stripe: Stripe },
  body: Buffer,
  signature: string,
  secret: string,
): Promise<'recorded' | 'duplicate' | 'ignored' | 'missing'> {
  let notification: ReturnType<Stripe['parseEventNotification']>;
  try {
    notification = deps.stripe.parseEventNotification(body, signature, secret);
  } catch (err) {
    // A bad signature, or a signed body that is no thin event (a v1 event sent here by mistake).
    throw new AppError('webhook_signature_invalid', { cause: err });
  }
  if (notification.type !== METER_ERROR_REPORT_EVENT) return 'ignored';
  let event: Awaited<ReturnType<typeof notification.fetchEvent>>;
  try {
    event = await notification.fetchEvent();
  } catch (err) {
    // An event Stripe does not know (another account's, or deleted): nothing to record, no retry.
    if (isResourceMissing(err)) {
      deps.logger.warn({ stripeEventId: notification.id }, 'thin event not found at Stripe; ignored');
      return 'missing';
    }
    // Anything else (Stripe down) answers 502/503 so that Stripe delivers it again.
    throw mapStripeError(err);
  }
  return (await recordMeterErrorReport(deps, event)) ? 'recorded' : 'duplicate';
}
