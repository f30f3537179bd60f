import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { ERROR_CODES, type ErrorCode } from '@platform/errors/codes';
import type { z } from 'zod';
import { EXAMPLE_REQUEST_ID, ZErrorBody } from './common';

const STATUS_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'A field breaks a rule, or the request cannot be served as asked.',
  401: 'Missing or invalid credentials.',
  403: 'Not allowed (for browsers: wrong Origin).',
  404: 'Not found.',
  409: 'Conflict with an earlier request.',
  413: 'The body is too large.',
  415: 'The body is not JSON.',
  422: 'The body is not valid JSON, a required field is missing or a field has the wrong type.',
  429: 'Too many requests; wait as Retry-After says.',
  500: 'Internal error; report the request_id.',
  502: 'An upstream service failed.',
  503: 'Temporarily unavailable; retry later.',
  504: 'An upstream service did not answer in time.',
};

/** Example `details` of a 422, so clients see the field list they get. */
const DESERIALIZATION_DETAILS = [
  { path: 'email', message: 'Invalid input: expected string, received undefined' },
];

function exampleOf(code: ErrorCode): { summary: string; value: object } {
  const { error } = ERROR_CODES[code];
  const value: Record<string, unknown> = { error, code, request_id: EXAMPLE_REQUEST_ID };
  if (code === 'deserialization_error') value.details = DESERIALIZATION_DETAILS;
  if (code === 'validation_failed')
    value.details = [{ path: 'success_url', message: 'must be an absolute http or https URL' }];
  return { summary: error, value };
}

/** How one API shapes its error responses in the OpenAPI document. */
export type ErrorResponseStyle = {
  /** The body schema of every error response. */
  schema: z.ZodType;
  /** The example body of one code. */
  example(code: ErrorCode, status: number): { summary: string; value: object };
  descriptions: Readonly<Record<number, string>>;
  /** The status a code is sent with, where the API differs from ours (default: the code's). */
  status?: (code: ErrorCode) => number;
};

/**
 * Error responses of one operation, grouped by HTTP status, each status with
 * one example per error code it may carry; a 429 documents Retry-After.
 */
export function groupErrorResponses(
  codes: readonly ErrorCode[],
  style: ErrorResponseStyle,
): Record<string, ResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = style.status?.(code) ?? ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, ResponseConfig> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const examples = Object.fromEntries(
      (byStatus.get(status) ?? []).map((c) => [c, style.example(c, status)]),
    );
    const response: ResponseConfig = {
      description: style.descriptions[status] ?? 'Error.',
      content: { 'application/json': { schema: style.schema, examples } },
    };
    if (status === 429) {
      response.headers = {
        'Retry-After': {
          description: 'Seconds to wait before retrying.',
          schema: { type: 'integer', minimum: 0 },
        },
      };
    }
    responses[String(status)] = response;
  }
  return responses;
}

/** Error responses of one operation of our own APIs: the body is always `ErrorBody`. */
export function buildErrorResponses(codes: readonly ErrorCode[]): Record<string, ResponseConfig> {
  return groupErrorResponses(codes, {
    schema: ZErrorBody,
    example: exampleOf,
    descriptions: STATUS_DESCRIPTIONS,
  });
}
