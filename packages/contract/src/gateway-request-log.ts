import { z } from 'zod';
import { ZProjectId } from './gateway-common';

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
    project_id: ZProjectId.optional(),
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

/** Most characters of a captured prompt, and of a captured answer (the rest is cut, and the cut said). */
export const MAX_CAPTURED_CHARS = 16_384;

export const ZCapturedContent = z
  .object({
    prompt: z.string().nullable().meta({
      description:
        'The messages as `role: content` paragraphs, redacted; null for requests without messages.',
    }),
    answer: z.string().nullable().meta({ description: 'The answer text the caller got, redacted.' }),
  })
  .meta({
    id: 'CapturedContent',
    description: `Kept only for projects whose owner turned capture on; secrets redacted, each text cut at ${MAX_CAPTURED_CHARS} characters.`,
  });
export type CapturedContent = z.infer<typeof ZCapturedContent>;

/** `GET /api/v1/request-log/{request_id}`: one request, with its captured content when the caller may read it. */
export const ZRequestLogDetail = ZRequestLogEntry.extend({
  content: ZCapturedContent.nullable().meta({
    description:
      "Null when the project did not capture content, or when the caller is not the project's owner (a team's key).",
  }),
}).meta({ id: 'RequestLogDetail' });
export type RequestLogDetail = z.infer<typeof ZRequestLogDetail>;

export const ZRequestLogResponse = z
  .object({ requests: z.array(ZRequestLogEntry), next_cursor: z.string().nullable() })
  .meta({ id: 'RequestLogResponse' });
export type RequestLogResponse = z.infer<typeof ZRequestLogResponse>;

/** A project's settings. Projects are the `project_id` labels of the owner's requests; unset ones have the defaults. */
export const ZProjectSettings = z
  .object({
    project_id: z.string(),
    capture_content: z.boolean().meta({
      description:
        'Keep the prompts and answers of this project in the request log (redacted, size-capped). Default false.',
    }),
    updated_at: z.string().nullable().meta({ description: 'Null for a project with the defaults.' }),
  })
  .meta({ id: 'ProjectSettings' });
export type ProjectSettings = z.infer<typeof ZProjectSettings>;

export const ZListProjectSettingsResponse = z
  .object({ projects: z.array(ZProjectSettings) })
  .meta({ id: 'ListProjectSettingsResponse' });
export type ListProjectSettingsResponse = z.infer<typeof ZListProjectSettingsResponse>;

/** `PUT /api/v1/project-settings`: sets one project's settings. */
export const ZSetProjectSettingsRequest = z
  .object({ project_id: ZProjectId, capture_content: z.boolean() })
  .strict()
  .meta({ id: 'SetProjectSettingsRequest' });
export type SetProjectSettingsRequest = z.infer<typeof ZSetProjectSettingsRequest>;
