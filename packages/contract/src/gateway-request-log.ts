import { z } from 'zod';

/** Most rows one page of the request log returns. */
export const MAX_REQUEST_LOG_LIMIT = 200;

/**
 * Query of `GET /api/v1/request-log`: the caller's AI requests, newest first,
 * filtered by time, key, project, model, status, cost and latency.
 */
export const ZRequestLogQuery = z
  .object({
    from: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Requests at or after this instant.' }),
    to: z.iso.datetime({ offset: true }).optional().meta({ description: 'Requests before this instant.' }),
    key_id: z.uuid().optional().meta({ description: 'Only requests made with this API key.' }),
    project_id: z.string().min(1).max(128).optional(),
    model: z.string().min(1).max(256).optional().meta({ description: 'The model that answered.' }),
    status: z
      .union([z.literal('failed'), z.coerce.number().int().min(100).max(599)])
      .optional()
      .meta({ description: 'An HTTP status, or `failed` for every status of 400 and more.' }),
    min_cost_micros: z.coerce.number().int().min(0).optional(),
    min_latency_ms: z.coerce.number().int().min(0).optional(),
    cursor: z.string().max(128).optional().meta({ description: 'next_cursor of the previous page.' }),
    limit: z.coerce.number().int().min(1).max(MAX_REQUEST_LOG_LIMIT).default(50),
  })
  .meta({ id: 'RequestLogQuery' });
export type RequestLogQuery = z.infer<typeof ZRequestLogQuery>;

export const ZRequestLogAttempt = z
  .object({
    target: z.string().meta({ description: '`provider/model`.' }),
    outcome: z.string().meta({ description: 'success, rate_limited, timeout, server_error, ...' }),
    status: z.number().int().nullable(),
    retry: z.number().int(),
    start_ms: z.number().int().meta({ description: 'From the start of the request.' }),
    duration_ms: z
      .number()
      .int()
      .meta({ description: 'Until the provider started answering (a stream: first content) or failed.' }),
  })
  .meta({ id: 'RequestLogAttempt' });

export const ZRequestLogEntry = z
  .object({
    request_id: z.uuid(),
    created_at: z.string(),
    key_id: z.uuid().nullable(),
    project_id: z.string(),
    endpoint: z.string(),
    lane: z.string().nullable(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    status: z.number().int(),
    error: z.string().nullable(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    cached_tokens: z.number().int(),
    cost_micros: z.number().int(),
    currency: z.string(),
    latency_ms: z.number().int(),
    ttft_ms: z.number().int().nullable(),
    user_agent: z.string().nullable(),
    attempts: z.array(ZRequestLogAttempt),
  })
  .meta({ id: 'RequestLogEntry' });
export type RequestLogEntry = z.infer<typeof ZRequestLogEntry>;

export const ZRequestLogResponse = z
  .object({ requests: z.array(ZRequestLogEntry), next_cursor: z.string().nullable() })
  .meta({ id: 'RequestLogResponse' });
export type RequestLogResponse = z.infer<typeof ZRequestLogResponse>;
