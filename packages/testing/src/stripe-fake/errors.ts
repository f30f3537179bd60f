/** Error types the Stripe API puts in `error.type`; stripe-node maps them (with the status) to its error classes. */
export type StripeErrorType =
  | 'api_error'
  | 'card_error'
  | 'idempotency_error'
  | 'invalid_request_error'
  | 'rate_limit_error';

/** The `error` object of a Stripe error response. */
export type StripeErrorBody = {
  type: StripeErrorType;
  message: string;
  param?: string;
  code?: string;
  decline_code?: string;
  doc_url?: string;
};

/** Thrown inside the fake's handlers; the server turns it into a Stripe-shaped response. */
export class StripeFakeError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
  ) {
    super(body.message);
  }
}

export function invalidRequest(message: string, param?: string, code?: string): StripeFakeError {
  const body: StripeErrorBody = { type: 'invalid_request_error', message };
  if (param !== undefined) body.param = param;
  if (code !== undefined) {
    body.code = code;
    body.doc_url = `https://stripe.com/docs/error-codes/${code.replaceAll('_', '-')}`;
  }
  return new StripeFakeError(400, body);
}

/** `No such customer: 'cus_x'`: 404 on retrieve, 400 when the id is a parameter of another call. */
export function resourceMissing(
  resource: string,
  id: string,
  param?: string,
  status: 400 | 404 = 404,
): StripeFakeError {
  const error = invalidRequest(`No such ${resource}: '${id}'`, param, 'resource_missing');
  return new StripeFakeError(status, error.body);
}
