import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { ZBudget, ZBudgetId, ZListBudgetsResponse, ZSetBudgetRequest } from './gateway-budgets';
import {
  ZServiceUsageFeedQuery,
  ZSubscriptionChangeRequest,
  ZUsageFeedQuery,
  ZUsageFeedResponse,
  ZUsageQuery,
  ZUsageResponse,
  ZUsageTodayResponse,
} from './gateway-usage';
import { buildErrorResponses } from './openapi-errors';
import { SESSION_OR_API_KEY } from './openapi-gateway-auth';
import { jsonBody, jsonResponse } from './openapi-shared';

const AUTH_ERRORS: readonly ErrorCode[] = [
  'missing_authentication',
  'invalid_api_key',
  'rate_limited',
  'internal',
];
const FEED_DESCRIPTION =
  'Oldest first, in the order records became durable in Postgres; a cursor never skips a record written ' +
  'later by a concurrent writer (see docs/usage-and-budgets.md). Records appear about a second after their request.';

export function registerUsagePaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/usage',
    operationId: 'getUsage',
    summary: 'Usage and cost per project and day',
    description: 'From the daily sums of the ledger; split by lane and model and by API key.',
    tags: ['Usage'],
    security: SESSION_OR_API_KEY,
    request: { query: ZUsageQuery },
    responses: {
      200: jsonResponse('Usage rows of the caller.', ZUsageResponse),
      ...buildErrorResponses([...AUTH_ERRORS, 'validation_failed', 'deserialization_error']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/usage/today',
    operationId: 'getUsageToday',
    summary: "Today's tokens against the daily token budget",
    description:
      'The count the AI endpoints reserve against before each call (it includes requests in flight); at or over the budget they answer 429.',
    tags: ['Usage'],
    security: SESSION_OR_API_KEY,
    responses: {
      200: jsonResponse('Tokens used today (UTC).', ZUsageTodayResponse),
      ...buildErrorResponses(AUTH_ERRORS),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/usage/records',
    operationId: 'listUsageRecords',
    summary: "The caller's ledger records, cursor-paginated",
    description: FEED_DESCRIPTION,
    tags: ['Usage'],
    security: SESSION_OR_API_KEY,
    request: { query: ZUsageFeedQuery },
    responses: {
      200: jsonResponse('A page of records.', ZUsageFeedResponse),
      ...buildErrorResponses([...AUTH_ERRORS, 'validation_failed', 'deserialization_error']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/usage/feed',
    operationId: 'readUsageFeed',
    summary: "Every user's ledger records, for in-house services (billing)",
    description: `${FEED_DESCRIPTION} Needs \`Authorization: Bearer <GATEWAY_SERVICE_TOKEN>\`; 503 when the gateway has none configured.`,
    tags: ['Usage'],
    security: [{ ServiceToken: [] }],
    request: { query: ZServiceUsageFeedQuery },
    responses: {
      200: jsonResponse('A page of records.', ZUsageFeedResponse),
      ...buildErrorResponses([
        'missing_authentication',
        'forbidden',
        'validation_failed',
        'deserialization_error',
        'service_unavailable',
        'internal',
      ]),
    },
  });
}

/** Payment's notice to the gateway (paid lanes' cache), with the service token. */
export function registerBillingPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/billing/subscription-changes',
    operationId: 'notifySubscriptionChange',
    summary: "A user's subscription changed: forget its cached status (payment calls this)",
    description:
      "Sent by payment after a Stripe webhook changed the user's subscription (GATEWAY_SUBSCRIPTION_NOTIFY_URL); every gateway instance forgets the user's cached status, so a paid lane sees the change at once instead of after BILLING_SUBSCRIPTION_CACHE_SECONDS. Needs `Authorization: Bearer <GATEWAY_SERVICE_TOKEN>`; 503 when the gateway has none configured.",
    tags: ['Usage'],
    security: [{ ServiceToken: [] }],
    request: { body: jsonBody(ZSubscriptionChangeRequest) },
    responses: {
      204: { description: 'Forgotten.' },
      ...buildErrorResponses([
        'missing_authentication',
        'forbidden',
        'validation_failed',
        'deserialization_error',
        'unsupported_media_type',
        'payload_too_large',
        'service_unavailable',
        'internal',
      ]),
    },
  });
}

export function registerBudgetPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/budgets',
    operationId: 'listBudgets',
    summary: 'Budgets in force, with their use',
    tags: ['Budgets'],
    security: SESSION_OR_API_KEY,
    responses: {
      200: jsonResponse('Budgets.', ZListBudgetsResponse),
      ...buildErrorResponses(AUTH_ERRORS),
    },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/v1/budgets',
    operationId: 'setBudget',
    summary: 'Set a token or cost budget',
    description:
      'Per user, API key or project, daily or monthly (UTC). A server default for the same scope, period and unit caps it. Over a budget the AI endpoints answer 429 rate_limited naming it in details, with Retry-After until its window resets.',
    tags: ['Budgets'],
    security: SESSION_OR_API_KEY,
    request: { body: jsonBody(ZSetBudgetRequest) },
    responses: {
      200: jsonResponse('The budget in force.', ZBudget),
      ...buildErrorResponses([
        ...AUTH_ERRORS,
        'validation_failed',
        'deserialization_error',
        'api_key_not_found',
        'csrf_origin',
      ]),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/v1/budgets',
    operationId: 'deleteBudget',
    summary: 'Remove a budget you set',
    tags: ['Budgets'],
    security: SESSION_OR_API_KEY,
    request: { query: ZBudgetId },
    responses: {
      204: { description: 'Removed (the server default, if any, applies again).' },
      ...buildErrorResponses([...AUTH_ERRORS, 'validation_failed', 'not_found', 'csrf_origin']),
    },
  });
}
