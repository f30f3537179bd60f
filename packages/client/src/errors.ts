/** One HTTP attempt of a logical call, kept on errors so a report can name every request. */
export type AttemptRecord = {
  /** 1 for the first request, 2 for the first retry, ... */
  attempt: number;
  /**
   * The request id of this attempt: the one the service reported when a response
   * arrived, otherwise the `x-request-id` the client sent (which the service logs).
   */
  requestId: string;
  /** HTTP status, absent when no response arrived. */
  status?: number;
  /** The service's `error` string, or a description of the network failure. */
  error: string;
};

type ClientErrorFields = {
  requestId?: string | undefined;
  attempts: number;
  history: readonly AttemptRecord[];
  cause?: unknown;
};

/** Base class of every error the clients throw (apart from the caller's own abort reason). */
export class PlatformClientError extends Error {
  /**
   * The request id to quote when reporting the problem: that of the final
   * response, or for a network error that of the last response that did arrive.
   */
  readonly requestId: string | undefined;
  /** How many HTTP requests this call made, retries included. */
  readonly attempts: number;
  /** Every attempt in order, including those whose response never arrived. */
  readonly history: readonly AttemptRecord[];

  constructor(message: string, fields: ClientErrorFields) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.requestId = fields.requestId;
    this.attempts = fields.attempts;
    this.history = fields.history;
  }

  /** Request ids of the responses that arrived, oldest first (the spec's "log the request_id"). */
  get requestIds(): string[] {
    return this.history.filter((a) => a.status !== undefined).map((a) => a.requestId);
  }
}

/** One field-level problem, as the services report validation errors. */
export type ApiErrorDetail = { path: string; message: string };

/** The service answered with an error status; `error` is the spec's error string. */
export class PlatformApiError extends PlatformClientError {
  /** HTTP status of the final response. */
  readonly status: number;
  /** The `error` field of the body, e.g. `invalid api key`; `http_<status>` when the body was not ours. */
  readonly error: string;
  /**
   * The body's stable machine `code` (e.g. `subscription_exists`, `customer_not_found`);
   * branch on this rather than on `error`. Undefined when the body was not ours.
   */
  readonly code: string | undefined;
  /** Field problems of a 400/422 validation error. */
  readonly details: readonly ApiErrorDetail[] | undefined;
  /** Parsed `Retry-After` of the final response, in milliseconds, when present. */
  readonly retryAfterMs: number | undefined;

  constructor(
    fields: ClientErrorFields & {
      status: number;
      error: string;
      code?: string | undefined;
      details?: readonly ApiErrorDetail[] | undefined;
      retryAfterMs?: number | undefined;
    },
  ) {
    super(
      `${fields.status} ${fields.error}${fields.requestId ? ` (request_id ${fields.requestId})` : ''}`,
      fields,
    );
    this.status = fields.status;
    this.error = fields.error;
    this.code = fields.code;
    this.details = fields.details;
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/**
 * No usable response: connection refused or dropped, per-attempt timeout, or a
 * stream that ended before its last event. `requestIds` keeps the ids of every
 * earlier response, so the failure can still be traced in the service's logs.
 */
export class NetworkError extends PlatformClientError {}

/** The service answered 2xx with a body that does not match the contract. */
export class ResponseValidationError extends PlatformClientError {
  readonly status: number;
  /** Zod's issues, paths and messages only (never the body, which may hold secrets). */
  readonly issues: readonly ApiErrorDetail[];

  constructor(fields: ClientErrorFields & { status: number; issues: readonly ApiErrorDetail[] }) {
    const first = fields.issues[0];
    super(
      `response does not match the contract${first ? `: ${first.path} ${first.message}` : ''}${
        fields.requestId ? ` (request_id ${fields.requestId})` : ''
      }`,
      fields,
    );
    this.status = fields.status;
    this.issues = fields.issues;
  }
}
