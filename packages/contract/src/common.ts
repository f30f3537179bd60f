import { z } from 'zod';

/** Example request id used throughout the OpenAPI documents. */
export const EXAMPLE_REQUEST_ID = '3f1c2a9e-0b7d-4c8e-9a51-2d6f4b8e7c10';

/** A request id: the UUID every response and log line carries. */
export const ZRequestId = z.uuid().meta({
  description: 'Id of the request; quote it when reporting a problem.',
  example: EXAMPLE_REQUEST_ID,
});

/** One field-level problem of a rejected request. */
export const ZErrorDetail = z
  .object({
    path: z
      .string()
      .meta({ description: 'Dotted path of the field, `(root)` for the body itself.', example: 'email' }),
    message: z.string().meta({ example: 'Invalid email address' }),
  })
  .meta({ id: 'ErrorDetail' });
export type ErrorDetail = z.infer<typeof ZErrorDetail>;

/** The body of every error response of both services. */
export const ZErrorBody = z
  .object({
    error: z
      .string()
      .meta({ description: 'Error code or message; the exact strings are listed per operation.' }),
    code: z.string().meta({
      description:
        'Stable machine code of the error (e.g. `validation_failed`, `subscription_exists`); branch on this, not on `error`.',
      example: 'validation_failed',
    }),
    request_id: ZRequestId,
    details: z.array(ZErrorDetail).optional().meta({ description: 'Present on validation errors only.' }),
  })
  .meta({ id: 'ErrorBody', description: 'Every error is answered with this body.' });
export type ErrorBody = z.infer<typeof ZErrorBody>;

/** An ISO 8601 timestamp in UTC with the `Z` suffix, e.g. `2026-11-21T10:00:00.000Z`. */
export const ZIsoTimestamp = z.iso.datetime().meta({ example: '2026-11-21T10:00:00.000Z' });

/** The fields after `status` of both health answers. */
const serviceClock = {
  timestamp: ZIsoTimestamp.meta({ description: 'Current server time (UTC).' }),
  service: z.string().meta({ description: 'Name of the service.', example: 'payment' }),
};

/** `GET /health` of both services. */
export const ZHealthResponse = z
  .object({ status: z.literal('ok'), ...serviceClock })
  .meta({ id: 'HealthResponse' });
export type HealthResponse = z.infer<typeof ZHealthResponse>;

/** State of one dependency in the readiness report. */
export const ZDependencyState = z.enum(['up', 'down']);

/** `GET /health/ready` of both services: every dependency with its state. */
export const ZReadinessResponse = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    ...serviceClock,
    checks: z.record(z.string(), ZDependencyState).meta({
      description:
        'Per dependency: `database` and `key_value_store` (required), `smtp` on the gateway when SMTP_URL is set (reported, not required).',
      example: { database: 'up', key_value_store: 'up' },
    }),
    details: z.record(z.string(), z.unknown()).optional().meta({
      description:
        'Facts that never decide readiness, e.g. `usage_outbox` on payment: pending and failed events, the oldest pending age, the sender state.',
    }),
  })
  .meta({ id: 'ReadinessResponse' });
export type ReadinessResponse = z.infer<typeof ZReadinessResponse>;

const CONTROL = /\p{Cc}/u;

/**
 * True when the string has no lone UTF-16 surrogate and no control character.
 * JSON may carry `"\ud800"`, which no UTF-8 encoder, URL encoder or HTTP header
 * can represent (Stripe's client throws `URIError` on it), and `"\u0000"`, which
 * Postgres cannot store in text; identifiers have no use for either, so such
 * strings are refused at the edge.
 */
export function isWellFormedText(value: string): boolean {
  return value.isWellFormed() && !CONTROL.test(value);
}

/** The refinement every identifier field carries; a failure is 400 validation failed. */
export const WELL_FORMED = [
  isWellFormedText,
  { message: 'must be well-formed Unicode text without control characters' },
] as const;

/** Longest URL we accept; browsers and Stripe cope with it, longer ones are abuse. */
export const MAX_URL_LENGTH = 2048;

const CONTROL_OR_SPACE = /[\s\p{Cc}]/u;

/**
 * True for an absolute http(s) URL with a host and without credentials. The
 * prefix check matters: `new URL('http:example.com')` normalises to a valid URL,
 * but a browser redirect to that raw string is not what the caller meant.
 */
export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\/[^/?#]/i.test(value) || CONTROL_OR_SPACE.test(value) || !value.isWellFormed())
    return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.hostname !== '' &&
      url.username === '' &&
      url.password === ''
    );
  } catch {
    return false;
  }
}

/**
 * An absolute http or https URL (at most 2048 characters). Other schemes
 * (`javascript:`, `data:`, `ftp:` …), relative URLs, embedded credentials and
 * whitespace are refused, because these values end up as browser redirects.
 */
export const ZHttpUrl = z
  .string()
  .max(MAX_URL_LENGTH)
  .refine(isHttpUrl, { message: 'must be an absolute http or https URL' })
  .meta({
    format: 'uri',
    description: 'Absolute http(s) URL, at most 2048 characters.',
    example: 'https://app.example.com/billing/done',
  });

/** An e-mail address as the services accept it (at most 254 characters, RFC 5321). */
export const ZEmail = z.email().max(254).meta({ example: 'ada@example.com' });

/** Prometheus text exposition, served by `GET /metrics` of both services. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
