import type { IncomingMessage, ServerResponse } from 'node:http';
import { flattenHeaders, readBody, sendJson } from '../http-server';
import { billingRoutes } from './billing-routes';
import { catalogRoutes } from './catalog-routes';
import { checkoutRoutes } from './checkout-routes';
import { customerRoutes } from './customer-routes';
import { type StripeErrorType, StripeFakeError } from './errors';
import { type FormObject, parseStripeForm } from './form';
import { invoiceRoutes } from './invoices';
import { meterRoutes } from './meter-routes';
import { validateParams } from './params';
import type { Route, RouteOptions } from './route';
import { makeId, type StripeStore } from './store';
import { truthRoutes } from './truth';

// truthRoutes first: `/v1/checkout/sessions/{id}/line_items` must not be taken for a session id.
const ROUTES: Route[] = [
  ...truthRoutes,
  ...catalogRoutes,
  ...customerRoutes,
  ...checkoutRoutes,
  ...billingRoutes,
  ...meterRoutes,
  ...invoiceRoutes,
];

/** One request as the fake received it, for asserting what the SDK sent. */
export type StripeFakeRequest = {
  method: string;
  /** Path without the query string, e.g. `/v1/checkout/sessions`. */
  path: string;
  /** Lower-cased request headers (`authorization`, `stripe-version`, `idempotency-key`, ...). */
  headers: Record<string, string>;
  /** Decoded bracket params as sent (strings, nested objects; arrays as index-keyed objects). */
  params: FormObject;
  /** Raw form body or query string. */
  raw: string;
  /** Status the fake answered with; undefined while pending or when hung. */
  status?: number;
};

/** A scripted failure, consumed by the next `times` matching requests. */
export type StripeFault = {
  path?: RegExp;
  method?: string;
  status?: number;
  type: StripeErrorType;
  message?: string;
  code?: string;
  declineCode?: string;
  /** How many matching requests fail; defaults to 1 (Infinity with `untilMs`), Infinity for all. */
  times?: number;
  /** Wall-clock ms until which matching requests fail ("Stripe answers 429 for a while"). */
  untilMs?: number;
  headers?: Record<string, string>;
};

/** A scripted hang: matching requests are never answered until the client gives up or the fake closes. */
export type StripeHang = { path?: RegExp; method?: string; times?: number };

export type ServerState = {
  store: StripeStore;
  requests: StripeFakeRequest[];
  faults: Array<StripeFault & { left: number }>;
  hangs: Array<StripeHang & { left: number }>;
  /** Stripe keeps an idempotency key for at least 24 hours; `created` is the store clock's unix seconds. */
  idempotency: Map<
    string,
    { endpoint: string; raw: string; status: number; body: string; requestId: string; created: number }
  >;
  apiKey: string | undefined;
  routeOptions: RouteOptions;
};

/** How long Stripe keeps an idempotency key (its documented minimum). */
const IDEMPOTENCY_KEY_SECONDS = 24 * 3600;

const DEFAULT_STATUS: Record<StripeErrorType, number> = {
  api_error: 500,
  card_error: 402,
  idempotency_error: 400,
  invalid_request_error: 400,
  rate_limit_error: 429,
};

function takeScripted<T extends { path?: RegExp; method?: string; left: number; untilMs?: number }>(
  list: T[],
  method: string,
  path: string,
): T | undefined {
  for (let i = list.length - 1; i >= 0; i--) {
    const until = list[i]?.untilMs;
    if (until !== undefined && Date.now() >= until) list.splice(i, 1);
  }
  const index = list.findIndex(
    (entry) => (entry.path === undefined || entry.path.test(path)) && (entry.method ?? method) === method,
  );
  const entry = list[index];
  if (!entry) return undefined;
  entry.left--;
  if (entry.left <= 0) list.splice(index, 1);
  return entry;
}

function checkAuth(headers: Record<string, string>, apiKey: string | undefined): StripeFakeError | undefined {
  const match = /^Bearer (\S+)$/.exec(headers.authorization ?? '');
  if (!match?.[1]) {
    return new StripeFakeError(401, {
      type: 'invalid_request_error',
      message:
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
    });
  }
  const key = match[1];
  // Live keys are refused so a misconfigured test can never look like it talked to real Stripe.
  if (!/^(sk|rk)_test_/.test(key) || (apiKey !== undefined && key !== apiKey)) {
    return new StripeFakeError(401, {
      type: 'invalid_request_error',
      message: `Invalid API Key provided: ${key.slice(0, 8)}****${key.slice(-4)}`,
      code: 'api_key_invalid',
    });
  }
  return undefined;
}

/** Builds the request handler: auth, scripted faults, idempotency replay, param validation, routing. */
export function createStripeHandler(state: ServerState) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const headers = flattenHeaders(req);
    const raw = method === 'POST' ? (await readBody(req)).toString('utf8') : url.search.slice(1);
    const record: StripeFakeRequest = {
      method,
      path: url.pathname,
      headers,
      params: Object.create(null),
      raw,
    };
    state.requests.push(record);
    const requestId = makeId('req', 14);
    const idempotencyKey = method === 'POST' ? headers['idempotency-key'] : undefined;
    const baseHeaders: Record<string, string> = {
      'request-id': requestId,
      'stripe-version': headers['stripe-version'] ?? '',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    };
    const reply = (status: number, body: unknown, extra: Record<string, string> = {}) => {
      record.status = status;
      sendJson(res, status, body, { ...baseHeaders, ...extra });
    };
    const fail = (error: StripeFakeError, extra: Record<string, string> = {}) =>
      reply(
        error.status,
        { error: { ...error.body, request_log_url: `https://dashboard.stripe.test/logs/${requestId}` } },
        extra,
      );

    try {
      record.params = parseStripeForm(raw);
    } catch (error) {
      if (error instanceof StripeFakeError) return fail(error);
      throw error;
    }
    const authError = checkAuth(headers, state.apiKey);
    if (authError) return fail(authError, { 'www-authenticate': 'Bearer realm="Stripe"' });

    if (takeScripted(state.hangs, method, url.pathname)) return;
    const fault = takeScripted(state.faults, method, url.pathname);
    if (fault) {
      const body = {
        type: fault.type,
        message: fault.message ?? `Scripted ${fault.type} from the Stripe fake.`,
        ...(fault.code ? { code: fault.code } : {}),
        ...(fault.declineCode ? { decline_code: fault.declineCode } : {}),
      };
      return fail(new StripeFakeError(fault.status ?? DEFAULT_STATUS[fault.type], body), fault.headers);
    }

    const endpoint = `${method} ${url.pathname}`;
    const cacheKey = idempotencyKey ? `${headers.authorization} ${idempotencyKey}` : undefined;
    let cached = cacheKey ? state.idempotency.get(cacheKey) : undefined;
    // Keys are pruned once they are 24 hours old: a later request with the key runs afresh.
    if (cached && cacheKey && state.store.now() - cached.created >= IDEMPOTENCY_KEY_SECONDS) {
      state.idempotency.delete(cacheKey);
      cached = undefined;
    }
    if (cached && idempotencyKey) {
      if (cached.endpoint !== endpoint) {
        return fail(
          idempotencyError(
            `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${cached.endpoint}' vs '${endpoint}'). Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
          ),
        );
      }
      if (cached.raw !== raw) {
        return fail(
          idempotencyError(
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
          ),
        );
      }
      record.status = cached.status;
      res.writeHead(cached.status, {
        ...baseHeaders,
        'content-type': 'application/json',
        'idempotent-replayed': 'true',
        'original-request': cached.requestId,
      });
      res.end(cached.body);
      return;
    }

    const candidates = ROUTES.filter((route) => route.pattern.test(url.pathname));
    const route = candidates.find((candidate) => candidate.method === method);
    if (!route) {
      return fail(
        new StripeFakeError(404, {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${method}: ${url.pathname}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
        }),
      );
    }
    try {
      const params = validateParams(record.params, route.params);
      const pathParams = (route.pattern.exec(url.pathname) ?? []).slice(1).map((s) => decodeURIComponent(s));
      const body = route.handle({ store: state.store, params, pathParams, options: state.routeOptions });
      const json = JSON.stringify(body);
      if (cacheKey)
        state.idempotency.set(cacheKey, {
          endpoint,
          raw,
          status: 200,
          body: json,
          requestId,
          created: state.store.now(),
        });
      record.status = 200;
      res.writeHead(200, { ...baseHeaders, 'content-type': 'application/json' });
      res.end(json);
    } catch (error) {
      if (error instanceof StripeFakeError) return fail(error);
      return fail(
        new StripeFakeError(500, { type: 'api_error', message: `Stripe fake bug: ${String(error)}` }),
      );
    }
  };
}

function idempotencyError(message: string): StripeFakeError {
  return new StripeFakeError(400, { type: 'idempotency_error', message });
}
